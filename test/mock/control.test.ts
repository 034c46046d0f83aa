import { schemas } from 'agent-messaging';
import { createMockService, mockSchemas } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { DOORS, useDoor } from './doors.js';
import { errorOf, setupScenario } from './helpers.js';

// The wire schemas as values, from the public namespace.
const { ListMessagesResponse } = schemas;
// The wire schemas as values, from the public namespace.
const { CreateUserResponse, Delivery, InstallResponse, RequestLogEntry, UserMessageResponse } = mockSchemas;

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, receiver, call } = useDoor(door);

  describe('the control surface under /_mock', () => {
    it('creates users, installs and user messages over HTTP, delivering message.received', async () => {
      const s = await setupScenario(mock);
      const created = await call('POST', '/_mock/users', { body: { display_name: 'Zed', verified: false } });
      expect(created.status).toBe(201);
      const { user, session_token } = CreateUserResponse.parse(created.body);
      expect(user.id).toMatch(/^usr_/);
      expect(session_token).toMatch(/^ams_us_/);
      const installed = await call('POST', '/_mock/installs', {
        body: { user_id: user.id, agent_id: s.agentId },
      });
      const { conversation_id } = InstallResponse.parse(installed.body);
      // Installing again answers the same conversation.
      const again = InstallResponse.parse(
        (await call('POST', '/_mock/installs', { body: { user_id: user.id, agent_id: s.agentId } })).body,
      );
      expect(again.conversation_id).toBe(conversation_id);
      const posted = await call('POST', `/_mock/conversations/${conversation_id}/user-messages`, {
        body: { user_id: user.id, text: 'hi bot' },
      });
      expect(posted.status).toBe(201);
      const { message } = UserMessageResponse.parse(posted.body);
      expect(message).toMatchObject({
        conversation_id,
        sender: { id: user.id },
        parts: [{ text: 'hi bot' }],
      });
      await mock.idle();
      expect(receiver.ofType('message.received').map((r) => r.json.conversationId)).toEqual([
        conversation_id,
      ]);
      const deliveries = z.array(Delivery).parse((await call('GET', '/_mock/deliveries')).body);
      expect(deliveries.map((d) => d.type)).toEqual(['webhook.test', 'message.received']);
    });

    it('answers 400 naming the field for a bad control request, and 404 outside membership', async () => {
      const s = await setupScenario(mock);
      const bad = await call('POST', '/_mock/users', { body: { display_name: '' } });
      expect(bad.status).toBe(400);
      expect(errorOf(bad).message).toContain('display_name');
      const stranger = mock.createUser({ display_name: 'Stranger' });
      const outside = await call('POST', `/_mock/conversations/${s.conversationId}/user-messages`, {
        body: { user_id: stranger.user.id, text: 'let me in' },
      });
      expect(outside.status).toBe(404);
      expect(() => mock.installAgent({ user_id: 'usr_nobody', agent_id: s.agentId })).toThrow(/user/);
    });

    it('answers 400 naming the field for a body sent to a call that takes none, and takes {} or nothing', async () => {
      const stray = await call('POST', '/_mock/reset', { body: { everything: true } });
      expect(stray.status).toBe(400);
      expect(errorOf(stray)).toEqual({
        code: 'invalid_request',
        message: 'everything: is not a known field',
      });
      expect((await call('POST', '/_mock/reset', { body: {} })).status).toBe(200);
      expect((await call('POST', '/_mock/reset')).status).toBe(200);
    });

    it('advances the clock over HTTP, and expiries fire', async () => {
      const s = await setupScenario(mock);
      const before = mock.clock.now().getTime();
      const answer = await call('POST', '/_mock/clock/advance', { body: { seconds: 3600 } });
      expect(answer.status).toBe(200);
      const { now } = z.object({ now: z.string() }).parse(answer.body);
      expect(Date.parse(now) - before).toBeGreaterThanOrEqual(3_600_000);
      expect(mock.clock.now().getTime() - before).toBeGreaterThanOrEqual(3_600_000);
      const sent = await call('POST', `/v1/conversations/${s.conversationId}/messages`, {
        token: s.apiKey,
        idempotencyKey: 'clock-key-1',
        body: { schema: 'svc.agent-send.v1', content: [{ type: 'text', text: 'x' }] },
      });
      expect(sent.status).toBe(201);
      const history = ListMessagesResponse.parse(
        (await call('GET', `/v1/conversations/${s.conversationId}/messages`, { token: s.apiKey })).body,
      );
      expect(Date.parse(history.messages[0]?.created_at ?? '')).toBeGreaterThanOrEqual(before + 3_600_000);
    });

    it('injects and clears faults over HTTP', async () => {
      const injected = await call('POST', '/_mock/faults', {
        body: { path: '/v1/agents', fault: 'status', status: 500 },
      });
      expect(injected.status).toBe(201);
      expect(z.object({ fault_id: z.string() }).parse(injected.body).fault_id).toBeTruthy();
      await call('DELETE', '/_mock/faults');
      const registered = await call('POST', '/v1/agents', {
        body: {
          handle: 'after_clear',
          display_name: 'A',
          webhook_url: 'https://x.example/',
          capabilities: ['text'],
        },
      });
      expect(registered.status).toBe(201);
      const bad = await call('POST', '/_mock/faults', { body: { path: '/v1/agents', fault: 'explode' } });
      expect(bad.status).toBe(400);
    });

    it('serves the request log over HTTP in the shape of PROTOCOL section 13', async () => {
      const s = await setupScenario(mock);
      const log = z.array(RequestLogEntry).parse((await call('GET', '/_mock/requests')).body);
      expect(log.map((entry) => `${entry.method} ${entry.path}`)).toEqual([
        'POST /v1/agents',
        `PATCH /v1/agents/${s.agentId}/webhook`,
      ]);
      expect(log[1]?.headers.authorization).toBe('Bearer ***');
      expect(JSON.parse(log[1]?.body ?? '')).toEqual({ webhook_url: 'https://bot.example/hook' });
    });

    it('resets to an empty state over HTTP and in-process', async () => {
      const s = await setupScenario(mock);
      mock.faults.inject({ path: '/v1/agents', fault: 'status', status: 500 });
      expect((await call('POST', '/_mock/reset')).status).toBe(200);
      expect(mock.requests).toEqual([]);
      expect(mock.deliveries).toEqual([]);
      // Tokens, conversations and faults are gone.
      expect((await call('GET', `/v1/conversations/${s.conversationId}`, { token: s.apiKey })).status).toBe(
        401,
      );
      const again = await setupScenario(mock);
      expect(again.agentId).not.toBe(s.agentId);
      mock.reset();
      expect(
        (await call('GET', `/v1/conversations/${again.conversationId}`, { token: again.apiKey })).status,
      ).toBe(401);
    });

    it('answers 404 for an unknown path, with a Request-Id', async () => {
      const answer = await call('GET', '/v1/nothing-here');
      expect(answer.status).toBe(404);
      expect(errorOf(answer).code).toBe('not_found');
      expect(answer.headers.get('request-id')).toMatch(/^req_/);
    });
  });
});

describe('the clock', () => {
  it('starts at the `now` option and runs on from there', async () => {
    const start = Date.parse('2030-01-01T00:00:00.000Z');
    const other = createMockService({ now: '2030-01-01T00:00:00.000Z' });
    const now = other.clock.now().getTime();
    expect(now).toBeGreaterThanOrEqual(start);
    expect(now).toBeLessThan(start + 60_000);
    await other.clock.advance(90);
    expect(other.clock.now().getTime()).toBeGreaterThanOrEqual(start + 90_000);
    await expect(other.clock.advance(-1)).rejects.toThrow(/seconds/);
  });
});
