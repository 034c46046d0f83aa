import { schemas } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { errorOf, newKey, setupScenario, textSend } from './helpers.js';

// The wire schemas as values, from the public namespace.
const { ListMessagesResponse, SendMessageResponse } = schemas;

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, call } = useDoor(door);

  describe('idempotency', () => {
    it('replays the first answer with Idempotent-Replayed and creates one message', async () => {
      const s = await setupScenario(mock);
      const key = newKey();
      const path = `/v1/conversations/${s.conversationId}/messages`;
      const first = await call('POST', path, {
        token: s.apiKey,
        idempotencyKey: key,
        body: textSend('once'),
      });
      const second = await call('POST', path, {
        token: s.apiKey,
        idempotencyKey: key,
        body: textSend('once'),
      });
      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(second.status).toBe(201);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.body).toEqual(first.body);
      // Every answer has its own Request-Id, replays included.
      expect(second.headers.get('request-id')).not.toBe(first.headers.get('request-id'));
      const history = ListMessagesResponse.parse((await call('GET', `${path}`, { token: s.apiKey })).body);
      expect(history.messages).toHaveLength(1);
    });

    it('treats the same body with its keys in another order as the same request', async () => {
      const s = await setupScenario(mock);
      const key = newKey();
      const path = `/v1/conversations/${s.conversationId}/messages`;
      await call('POST', path, {
        token: s.apiKey,
        idempotencyKey: key,
        body: '{"schema":"svc.agent-send.v1","content":[]}',
      });
      const again = await call('POST', path, {
        token: s.apiKey,
        idempotencyKey: key,
        body: '{"content":[],"schema":"svc.agent-send.v1"}',
      });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    });

    it('answers 422 idempotency_key_reused for the same key with another body', async () => {
      const s = await setupScenario(mock);
      const key = newKey();
      const path = `/v1/conversations/${s.conversationId}/messages`;
      await call('POST', path, { token: s.apiKey, idempotencyKey: key, body: textSend('one') });
      const reused = await call('POST', path, {
        token: s.apiKey,
        idempotencyKey: key,
        body: textSend('two'),
      });
      expect(reused.status).toBe(422);
      expect(errorOf(reused).code).toBe('idempotency_key_reused');
    });

    it('answers 409 idempotency_in_progress while the first request is still in flight', async () => {
      const s = await setupScenario(mock);
      const key = newKey();
      const path = `/v1/conversations/${s.conversationId}/messages`;
      mock.faults.inject({
        method: 'POST',
        path: '/v1/conversations/*/messages',
        fault: 'delay',
        // Held far longer than the second request takes to arrive, however busy the machine.
        delay_ms: 2000,
      });
      const slow = call('POST', path, { token: s.apiKey, idempotencyKey: key, body: textSend('slow') });
      // The request log shows when the first request has arrived and holds the key.
      while (mock.requests.filter((entry) => entry.method === 'POST' && entry.path === path).length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const meanwhile = await call('POST', path, {
        token: s.apiKey,
        idempotencyKey: key,
        body: textSend('slow'),
      });
      expect(meanwhile.status).toBe(409);
      expect(errorOf(meanwhile).code).toBe('idempotency_in_progress');
      expect((await slow).status).toBe(201);
      const after = await call('POST', path, {
        token: s.apiKey,
        idempotencyKey: key,
        body: textSend('slow'),
      });
      expect(after.headers.get('idempotent-replayed')).toBe('true');
    });

    it('scopes keys to the caller: another agent may use the same key', async () => {
      const first = await setupScenario(mock, 'first_bot');
      const second = await setupScenario(mock, 'second_bot');
      const key = newKey();
      const a = await call('POST', `/v1/conversations/${first.conversationId}/messages`, {
        token: first.apiKey,
        idempotencyKey: key,
        body: textSend('hi'),
      });
      const b = await call('POST', `/v1/conversations/${second.conversationId}/messages`, {
        token: second.apiKey,
        idempotencyKey: key,
        body: textSend('hi'),
      });
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      expect(SendMessageResponse.parse(b.body).message.id).not.toBe(
        SendMessageResponse.parse(a.body).message.id,
      );
    });

    it('does not store an error, so a retry with the same key after fixing the cause does the work', async () => {
      const s = await setupScenario(mock);
      const newcomer = mock.createUser({ display_name: 'Newcomer' });
      const key = newKey();
      const body = { title: 'Team', user_ids: [newcomer.user.id], reason: 'Plan the launch' };
      const refused = await call('POST', '/v1/groups/invites', {
        token: s.apiKey,
        idempotencyKey: key,
        body,
      });
      expect(refused.status).toBe(422);
      mock.installAgent({ user_id: newcomer.user.id, agent_id: s.agentId });
      const retried = await call('POST', '/v1/groups/invites', {
        token: s.apiKey,
        idempotencyKey: key,
        body,
      });
      expect(retried.status).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
    });

    it('forgets a key after 24 hours on the clock', async () => {
      const s = await setupScenario(mock);
      const key = newKey();
      const path = `/v1/conversations/${s.conversationId}/messages`;
      await call('POST', path, { token: s.apiKey, idempotencyKey: key, body: textSend('day one') });
      await mock.clock.advance(24 * 3600 + 1);
      const later = await call('POST', path, {
        token: s.apiKey,
        idempotencyKey: key,
        body: textSend('day two'),
      });
      expect(later.status).toBe(201);
      expect(later.headers.get('idempotent-replayed')).toBeNull();
    });
  });
});
