import { schemas } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { errorOf, newKey, setupScenario, textSend } from './helpers.js';

// The wire schemas as values, from the public namespace.
const { ListMessagesResponse, ReactionResponse, Receipt, SendMessageResponse, TypingResponse } = schemas;

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, call } = useDoor(door);

  async function latest(conversationId: string, apiKey: string) {
    const answer = await call('GET', `/v1/conversations/${conversationId}/messages?limit=1`, {
      token: apiKey,
    });
    return ListMessagesResponse.parse(answer.body).messages[0];
  }

  describe('conversations.typing', () => {
    it('answers expires_at 10 s ahead on start and now on stop', async () => {
      const s = await setupScenario(mock);
      const typing = async (state: string) => {
        const before = mock.clock.now().getTime();
        const answer = await call('POST', `/v1/conversations/${s.conversationId}/typing`, {
          token: s.apiKey,
          body: { state },
        });
        const after = mock.clock.now().getTime();
        return { before, after, body: TypingResponse.parse(answer.body) };
      };
      const start = await typing('start');
      expect(start.body).toMatchObject({ conversation_id: s.conversationId, state: 'start' });
      const startExpiry = Date.parse(start.body.expires_at);
      expect(startExpiry).toBeGreaterThanOrEqual(start.before + 10_000);
      expect(startExpiry).toBeLessThanOrEqual(start.after + 10_000);
      await mock.clock.advance(3);
      const stop = await typing('stop');
      expect(Date.parse(stop.body.expires_at)).toBeGreaterThanOrEqual(stop.before);
      expect(Date.parse(stop.body.expires_at)).toBeLessThanOrEqual(stop.after);
    });

    it('answers 400 naming state for another value', async () => {
      const s = await setupScenario(mock);
      const answer = await call('POST', `/v1/conversations/${s.conversationId}/typing`, {
        token: s.apiKey,
        body: { state: 'maybe' },
      });
      expect(answer.status).toBe(400);
      expect(errorOf(answer).message).toContain('state');
    });
  });

  describe('conversations.sendReceipt and conversations.markRead', () => {
    it('sets delivered_at and read_at once; a repeat answers the first time', async () => {
      const s = await setupScenario(mock);
      const { message } = mock.postUserMessage(s.conversationId, { user_id: s.userId, text: 'hi' });
      const path = `/v1/conversations/${s.conversationId}`;
      const delivered = Receipt.parse(
        (
          await call('POST', `${path}/receipts`, {
            token: s.apiKey,
            body: { message_id: message.id, type: 'delivered' },
          })
        ).body,
      );
      expect(delivered).toMatchObject({ message_id: message.id, type: 'delivered' });
      await mock.clock.advance(30);
      const repeat = Receipt.parse(
        (
          await call('POST', `${path}/receipts`, {
            token: s.apiKey,
            body: { message_id: message.id, type: 'delivered' },
          })
        ).body,
      );
      expect(repeat.at).toBe(delivered.at);
      const read = Receipt.parse(
        (await call('POST', `${path}/read`, { token: s.apiKey, body: { message_id: message.id } })).body,
      );
      expect(read.type).toBe('read');
      expect(Date.parse(read.at) - Date.parse(delivered.at)).toBeGreaterThanOrEqual(30_000);
      expect(await latest(s.conversationId, s.apiKey)).toMatchObject({
        delivered_at: delivered.at,
        read_at: read.at,
      });
    });

    it('answers 400 for a receipt on its own message and 404 for a message elsewhere', async () => {
      const s = await setupScenario(mock);
      const own = SendMessageResponse.parse(
        (
          await call('POST', `/v1/conversations/${s.conversationId}/messages`, {
            token: s.apiKey,
            idempotencyKey: newKey(),
            body: textSend('mine'),
          })
        ).body,
      ).message;
      const path = `/v1/conversations/${s.conversationId}`;
      const self = await call('POST', `${path}/read`, { token: s.apiKey, body: { message_id: own.id } });
      expect(self.status).toBe(400);
      expect(errorOf(self).message).toContain('message_id');
      const missing = await call('POST', `${path}/read`, {
        token: s.apiKey,
        body: { message_id: 'msg_nowhere' },
      });
      expect(missing.status).toBe(404);
    });
  });

  describe('messages.react', () => {
    it('keeps one reaction per actor and emoji, on part 0, and removes it', async () => {
      const s = await setupScenario(mock);
      const { message } = mock.postUserMessage(s.conversationId, { user_id: s.userId, text: 'hi' });
      const path = `/v1/messages/${message.id}/reactions`;
      const added = ReactionResponse.parse(
        (await call('POST', path, { token: s.apiKey, body: { emoji: '👍', action: 'add' } })).body,
      );
      expect(added).toMatchObject({ message_id: message.id, emoji: '👍', action: 'add' });
      await call('POST', path, { token: s.apiKey, body: { emoji: '👍', action: 'add' } });
      expect((await latest(s.conversationId, s.apiKey))?.reactions).toEqual([
        { part_index: 0, emoji: '👍', actor_id: s.agentId },
      ]);
      expect(
        (await call('POST', path, { token: s.apiKey, body: { emoji: '👍', action: 'remove' } })).status,
      ).toBe(200);
      expect(
        (await call('POST', path, { token: s.apiKey, body: { emoji: '👍', action: 'remove' } })).status,
      ).toBe(200);
      expect((await latest(s.conversationId, s.apiKey))?.reactions).toEqual([]);
    });

    it('answers 400 for an emoji over 16 characters', async () => {
      const s = await setupScenario(mock);
      const { message } = mock.postUserMessage(s.conversationId, { user_id: s.userId, text: 'hi' });
      const answer = await call('POST', `/v1/messages/${message.id}/reactions`, {
        token: s.apiKey,
        body: { emoji: 'x'.repeat(17), action: 'add' },
      });
      expect(answer.status).toBe(400);
      expect(errorOf(answer).message).toContain('emoji');
    });
  });
});
