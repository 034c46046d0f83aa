import { mockSchemas } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { errorOf, newKey, setupScenario, textSend } from './helpers.js';

// The wire schemas as values, from the public namespace.
const { RequestLogEntry } = mockSchemas;

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, call } = useDoor(door);

  describe('authentication', () => {
    it('answers 401 unauthorized without a bearer token', async () => {
      const { conversationId } = await setupScenario(mock);
      const answer = await call('GET', `/v1/conversations/${conversationId}`);
      expect(answer.status).toBe(401);
      expect(errorOf(answer).code).toBe('unauthorized');
      expect(answer.headers.get('request-id')).toMatch(/^req_/);
    });

    it('answers 401 for an unknown token without echoing it', async () => {
      const { conversationId } = await setupScenario(mock);
      const answer = await call('GET', `/v1/conversations/${conversationId}`, {
        token: 'ams_sk_notarealtokennotarealtoken00',
      });
      expect(answer.status).toBe(401);
      expect(JSON.stringify(answer.body)).not.toContain('notarealtoken');
    });

    it('answers 401 when a user session calls an agent endpoint', async () => {
      const { conversationId, sessionToken } = await setupScenario(mock);
      const answer = await call('GET', `/v1/conversations/${conversationId}`, { token: sessionToken });
      expect(answer.status).toBe(401);
      expect(errorOf(answer).message).toMatch(/agent token/);
    });

    it('answers 401 when an agent token calls a user endpoint', async () => {
      const { apiKey, userId } = await setupScenario(mock);
      const answer = await call('POST', '/v1/conversations/direct', {
        token: apiKey,
        body: { user_id: userId },
        idempotencyKey: newKey(),
      });
      expect(answer.status).toBe(401);
      expect(errorOf(answer).message).toMatch(/user session/);
    });

    it('checks authentication before the request shape', async () => {
      const answer = await call('POST', '/v1/conversations/cnv_x/messages', { body: { nonsense: true } });
      expect(answer.status).toBe(401);
    });

    it('issues tokens and secrets in the formats of PROTOCOL section 3', async () => {
      const { apiKey, sessionToken, webhookSecret } = await setupScenario(mock);
      expect(apiKey).toMatch(/^ams_sk_[A-Za-z0-9_-]{32}$/);
      expect(sessionToken).toMatch(/^ams_us_[A-Za-z0-9_-]{32}$/);
      expect(webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    });
  });

  describe('membership', () => {
    it('answers 404 for a conversation the agent is not part of, like an unknown one', async () => {
      const first = await setupScenario(mock, 'first_bot');
      const second = await setupScenario(mock, 'second_bot');
      const outside = await call('GET', `/v1/conversations/${first.conversationId}`, {
        token: second.apiKey,
      });
      const unknown = await call('GET', '/v1/conversations/cnv_doesnotexist', { token: second.apiKey });
      expect(outside.status).toBe(404);
      expect(unknown.status).toBe(404);
      expect(errorOf(outside).code).toBe('not_found');
      const history = await call('GET', `/v1/conversations/${first.conversationId}/messages`, {
        token: second.apiKey,
      });
      expect(history.status).toBe(404);
      const send = await call('POST', `/v1/conversations/${first.conversationId}/messages`, {
        token: second.apiKey,
        body: textSend('hi'),
        idempotencyKey: newKey(),
      });
      expect(send.status).toBe(404);
    });

    it('answers 403 for an agent that is not active, after membership', async () => {
      const registered = await call('POST', '/v1/agents', {
        body: {
          handle: 'pending_bot',
          display_name: 'Pending',
          webhook_url: 'https://bot.example/p',
          capabilities: ['text'],
        },
      });
      const { agent, api_key } = registered.body as { agent: { id: string }; api_key: string };
      const { user } = mock.createUser({ display_name: 'Bo' });
      const { conversation_id } = mock.installAgent({ user_id: user.id, agent_id: agent.id });
      const send = await call('POST', `/v1/conversations/${conversation_id}/messages`, {
        token: api_key,
        body: textSend('hi'),
        idempotencyKey: newKey(),
      });
      expect(send.status).toBe(403);
      expect(errorOf(send).code).toBe('forbidden');
      // Reading is allowed before the webhook is verified.
      const read = await call('GET', `/v1/conversations/${conversation_id}`, { token: api_key });
      expect(read.status).toBe(200);
    });
  });

  describe('the request log', () => {
    it('records each /v1 request as it arrived, with bearer tokens masked', async () => {
      const { conversationId, apiKey } = await setupScenario(mock);
      await call('GET', `/v1/conversations/${conversationId}/messages?limit=5&before_sequence=9`, {
        token: apiKey,
      });
      const entry = RequestLogEntry.parse(mock.requests.at(-1));
      expect(entry).toEqual({
        method: 'GET',
        path: `/v1/conversations/${conversationId}/messages`,
        query: { limit: '5', before_sequence: '9' },
        headers: expect.objectContaining({ authorization: 'Bearer ***' }),
        body: null,
      });
      expect(JSON.stringify(mock.requests)).not.toContain(apiKey);
      expect(Object.keys(entry.headers).every((name) => name === name.toLowerCase())).toBe(true);
    });

    it('records the raw body text and requests that failed, but not the control surface', async () => {
      await call('POST', '/v1/agents', { body: '{"handle": "x"' });
      await call('POST', '/_mock/users', { body: { display_name: 'Cy' } });
      const log = mock.requests;
      expect(log).toHaveLength(1);
      expect(log[0]?.body).toBe('{"handle": "x"');
    });
  });
});
