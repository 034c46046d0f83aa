import { schemas } from 'agent-messaging';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
// Private: the SDK's check of a webhook event (the union of the event schemas).
import { parseWebhookEvent } from '../../src/webhooks/verify.js';
import { DOORS, useDoor } from './doors.js';
import { errorOf, newKey, textSend } from './helpers.js';

// The wire schemas as values, from the public namespace.
const { RegisterAgentResponse, SetWebhookResponse } = schemas;

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, receiver, call } = useDoor(door);

  const registration = {
    handle: 'weather',
    display_name: 'Weather',
    webhook_url: 'https://bot.example/hook',
    capabilities: ['text'],
  };

  async function register() {
    const answer = await call('POST', '/v1/agents', { body: registration });
    return RegisterAgentResponse.parse(answer.body);
  }

  describe('agents.register', () => {
    it('creates a pending agent with credentials, without a token', async () => {
      const answer = await call('POST', '/v1/agents', { body: registration });
      expect(answer.status).toBe(201);
      const body = RegisterAgentResponse.parse(answer.body);
      expect(body.agent).toMatchObject({
        handle: 'weather',
        status: 'pending_webhook',
        webhook_status: 'unverified',
      });
      expect(body.agent.id).toMatch(/^agt_/);
      expect(mock.requests[0]?.headers.authorization).toBeUndefined();
    });

    it('answers 409 handle_taken for a handle in use', async () => {
      await register();
      const answer = await call('POST', '/v1/agents', { body: { ...registration, display_name: 'Other' } });
      expect(answer.status).toBe(409);
      expect(errorOf(answer).code).toBe('handle_taken');
    });

    it('answers 400 naming every bad field', async () => {
      const answer = await call('POST', '/v1/agents', {
        body: { handle: 'No Caps', display_name: '', webhook_url: 'ftp://x', capabilities: ['text', 'text'] },
      });
      expect(answer.status).toBe(400);
      const { code, message } = errorOf(answer);
      expect(code).toBe('invalid_request');
      for (const field of ['handle', 'display_name', 'webhook_url', 'capabilities'])
        expect(message).toContain(`${field}:`);
    });

    it('answers 400 for malformed JSON and for unknown fields', async () => {
      const malformed = await call('POST', '/v1/agents', { body: '{"handle":' });
      expect(malformed.status).toBe(400);
      expect(errorOf(malformed).message).toContain('body');
      const unknown = await call('POST', '/v1/agents', { body: { ...registration, color: 'red' } });
      expect(unknown.status).toBe(400);
      expect(errorOf(unknown).message).toContain('color');
    });
  });

  describe('agents.setWebhook', () => {
    it('delivers a signed webhook.test and activates the agent on a 2xx', async () => {
      const { agent, api_key, webhook_secret } = await register();
      const answer = await call('PATCH', `/v1/agents/${agent.id}/webhook`, {
        token: api_key,
        body: { webhook_url: 'https://bot.example/new', capabilities: ['text', 'buttons'] },
      });
      expect(answer.status).toBe(200);
      expect(SetWebhookResponse.parse(answer.body)).toEqual({
        agent_id: agent.id,
        webhook_url: 'https://bot.example/new',
        webhook_status: 'verified',
      });
      const [delivery] = receiver.received;
      expect(delivery?.url).toBe('https://bot.example/new');
      // An independent verifier accepts the signature.
      const verified = new Webhook(webhook_secret).verify(delivery?.body ?? '', delivery?.headers ?? {});
      const event = parseWebhookEvent(verified);
      expect(event.success && event.data.type).toBe('webhook.test');
      expect(delivery?.json).toMatchObject({
        schema: 'svc.event.v1',
        agentId: agent.id,
        eventId: delivery?.headers['webhook-id'],
      });
      expect(mock.deliveries).toEqual([
        expect.objectContaining({
          type: 'webhook.test',
          url: 'https://bot.example/new',
          attempt: 1,
          status: 204,
        }),
      ]);
      // Now active: it may send.
      const { user } = mock.createUser({ display_name: 'Ada' });
      const { conversation_id } = mock.installAgent({ user_id: user.id, agent_id: agent.id });
      const send = await call('POST', `/v1/conversations/${conversation_id}/messages`, {
        token: api_key,
        body: textSend('hi'),
        idempotencyKey: newKey(),
      });
      expect(send.status).toBe(201);
    });

    it('answers 422 webhook_verification_failed on a non-2xx and changes nothing', async () => {
      const { agent, api_key } = await register();
      receiver.status = 500;
      const answer = await call('PATCH', `/v1/agents/${agent.id}/webhook`, {
        token: api_key,
        body: { webhook_url: 'https://bot.example/broken' },
      });
      expect(answer.status).toBe(422);
      expect(errorOf(answer).code).toBe('webhook_verification_failed');
      receiver.status = 204;
      const { user } = mock.createUser({ display_name: 'Ada' });
      const { conversation_id } = mock.installAgent({ user_id: user.id, agent_id: agent.id });
      const send = await call('POST', `/v1/conversations/${conversation_id}/messages`, {
        token: api_key,
        body: textSend('hi'),
        idempotencyKey: newKey(),
      });
      expect(send.status).toBe(403);
      expect(mock.deliveries).toEqual([
        expect.objectContaining({ type: 'webhook.test', status: 500, attempt: 1 }),
      ]);
    });

    it('answers 422 when the webhook cannot be reached, and never retries webhook.test', async () => {
      const { agent, api_key } = await register();
      receiver.status = () => {
        throw new Error('connection refused');
      };
      const answer = await call('PATCH', `/v1/agents/${agent.id}/webhook`, {
        token: api_key,
        body: { webhook_url: 'https://down.example/' },
      });
      expect(answer.status).toBe(422);
      await mock.clock.advance(3600);
      await mock.idle();
      expect(mock.deliveries).toHaveLength(1);
      expect(mock.deliveries[0]).toMatchObject({
        status: null,
        error: expect.stringContaining('connection refused'),
      });
    });

    it("answers 404 for another agent's webhook", async () => {
      const first = await register();
      const second = RegisterAgentResponse.parse(
        (await call('POST', '/v1/agents', { body: { ...registration, handle: 'other_bot' } })).body,
      );
      const answer = await call('PATCH', `/v1/agents/${first.agent.id}/webhook`, {
        token: second.api_key,
        body: { webhook_url: 'https://bot.example/x' },
      });
      expect(answer.status).toBe(404);
      expect(receiver.received).toHaveLength(0);
    });
  });
});
