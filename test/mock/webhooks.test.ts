import { schemas } from 'agent-messaging';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { setupScenario } from './helpers.js';

// The wire schemas as values, from the public namespace.
const { MessageReceivedEvent } = schemas;

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, receiver } = useDoor(door);

  describe('message.received', () => {
    it('is delivered, signed, for every message a user posts', async () => {
      const scenario = await setupScenario(mock);
      receiver.received.length = 0;
      const { message } = mock.postUserMessage(scenario.conversationId, {
        user_id: scenario.userId,
        text: 'hello',
      });
      await mock.idle();
      const [delivery] = receiver.ofType('message.received');
      const payload = new Webhook(scenario.webhookSecret).verify(
        delivery?.body ?? '',
        delivery?.headers ?? {},
      );
      const event = MessageReceivedEvent.parse(payload);
      expect(event.conversationId).toBe(scenario.conversationId);
      expect(event.message).toMatchObject({
        id: message.id,
        sender: { id: scenario.userId },
        parts: [{ text: 'hello' }],
      });
      expect(event.agentId).toBe(scenario.agentId);
    });

    it('signs with the real wall-clock time even after the clock was advanced', async () => {
      const scenario = await setupScenario(mock);
      await mock.clock.advance(7 * 24 * 3600);
      mock.postUserMessage(scenario.conversationId, { user_id: scenario.userId, text: 'later' });
      await mock.idle();
      const delivery = receiver.ofType('message.received')[0];
      const timestamp = Number(delivery?.headers['webhook-timestamp']);
      expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(60);
      expect(() =>
        new Webhook(scenario.webhookSecret).verify(delivery?.body ?? '', delivery?.headers ?? {}),
      ).not.toThrow();
    });
  });

  describe('retries', () => {
    it('retries on the clock after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h with the same webhook-id, then drops', async () => {
      const scenario = await setupScenario(mock);
      receiver.status = 503;
      mock.postUserMessage(scenario.conversationId, { user_id: scenario.userId, text: 'hello' });
      await mock.idle();
      const attempts = () => receiver.ofType('message.received');
      expect(attempts()).toHaveLength(1);
      // Just short of each delay nothing happens; at the delay the next attempt is made.
      for (const [index, delay] of [5, 300, 1800, 7200, 18_000, 36_000].entries()) {
        await mock.clock.advance(delay - 1);
        await mock.idle();
        expect(attempts()).toHaveLength(index + 1);
        await mock.clock.advance(1);
        await mock.idle();
        expect(attempts()).toHaveLength(index + 2);
      }
      await mock.clock.advance(7 * 24 * 3600);
      await mock.idle();
      expect(attempts()).toHaveLength(7);
      expect(new Set(attempts().map((attempt) => attempt.headers['webhook-id'])).size).toBe(1);
      const deliveries = mock.deliveries.filter((delivery) => delivery.type === 'message.received');
      expect(deliveries.map((delivery) => delivery.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(deliveries.every((delivery) => delivery.status === 503)).toBe(true);
    });

    it('stops retrying once an attempt is answered with a 2xx', async () => {
      const scenario = await setupScenario(mock);
      receiver.status = 500;
      mock.postUserMessage(scenario.conversationId, { user_id: scenario.userId, text: 'hello' });
      await mock.idle();
      receiver.status = 200;
      await mock.clock.advance(5);
      await mock.idle();
      await mock.clock.advance(24 * 3600);
      await mock.idle();
      expect(mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status)).toEqual([
        500, 200,
      ]);
    });

    it('counts an attempt with no answer within 10 s as failed', async () => {
      const scenario = await setupScenario(mock);
      receiver.status = () => {
        throw new DOMException('The operation was aborted due to timeout', 'TimeoutError');
      };
      mock.postUserMessage(scenario.conversationId, { user_id: scenario.userId, text: 'hello' });
      await mock.idle();
      expect(mock.deliveries.at(-1)).toMatchObject({ status: null, error: 'no answer within 10 s' });
    });

    it('retries in real time too, without advancing the clock', async () => {
      const scenario = await setupScenario(mock);
      let failFirst = true;
      const secondAttempt = new Promise<void>((resolve) => {
        receiver.status = () => {
          if (failFirst) {
            failFirst = false;
            return 500;
          }
          resolve();
          return 200;
        };
      });
      mock.postUserMessage(scenario.conversationId, { user_id: scenario.userId, text: 'hello' });
      await mock.idle();
      // After 4.9 s on the clock, the real-time timer has only 0.1 s left before the 5 s retry.
      await mock.clock.advance(4.9);
      await secondAttempt;
      await mock.idle();
      expect(mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status)).toEqual([
        500, 200,
      ]);
    });
  });
});
