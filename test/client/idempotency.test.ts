import { idempotencyKeyFor } from 'agent-messaging';
import { describe, expect, test } from 'vitest';
// Private: the wire's rule for an Idempotency-Key, checked against each derived key.
import { IdempotencyKey } from '../../src/schemas/common.js';
import { useWorld } from './world.js';

describe('idempotencyKeyFor', () => {
  test('gives the same key for the same event and purpose, every time', () => {
    expect(idempotencyKeyFor('evt_abc')).toBe(idempotencyKeyFor('evt_abc'));
    expect(idempotencyKeyFor('evt_abc', 'invite')).toBe(idempotencyKeyFor('evt_abc', 'invite'));
  });

  test('gives different keys for different events or purposes', () => {
    const keys = new Set([
      idempotencyKeyFor('evt_abc'),
      idempotencyKeyFor('evt_abd'),
      idempotencyKeyFor('evt_abc', 'invite'),
      idempotencyKeyFor('b:evt', 'a'),
      idempotencyKeyFor('evt', 'a:b'),
      idempotencyKeyFor(`evt_${'x'.repeat(300)}1`),
      idempotencyKeyFor(`evt_${'x'.repeat(300)}2`),
    ]);
    expect(keys.size).toBe(7);
  });

  test.each([['evt_1'], ['e'], ['evt with spaces and ünïcode 🙂'], ['x'.repeat(1000)]])(
    'derives a valid header value from %j',
    (eventId) => {
      const key = idempotencyKeyFor(eventId, 'reply to user');

      expect(IdempotencyKey.safeParse(key).success).toBe(true);
      expect(key.length).toBeLessThanOrEqual(255);
    },
  );

  test('a blank event id is a ValidationError naming eventId', () => {
    expect(() => idempotencyKeyFor('  ')).toThrow(/eventId: must be a non-blank string/);
  });
});

describe('a redelivered event', () => {
  const w = useWorld('msw');

  test('sends one message when the reply is keyed by the event', async () => {
    const event = { eventId: 'evt_redelivered_1' };

    const first = await w.client.messages.send(
      w.conversationId,
      { text: 'Hi!' },
      { idempotencyKey: idempotencyKeyFor(event.eventId) },
    );
    const second = await w.client.messages.send(
      w.conversationId,
      { text: 'Hi!' },
      { idempotencyKey: idempotencyKeyFor(event.eventId) },
    );

    expect(second.message.id).toBe(first.message.id);
    const { messages } = await w.client.conversations.listMessages(w.conversationId);
    expect(messages.filter((message) => message.sender.id === w.agentId)).toHaveLength(1);
  });
});
