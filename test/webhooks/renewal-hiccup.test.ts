// A store hiccup is not a lost lock (issue 24): a renewal of the conversation's lock that fails once,
// with most of its TTL left, is tried again at the next renewal, and the handler goes on; only a lock
// the store says is gone, or whose TTL ran out unconfirmed, stops it.
import { type BotStore, createMemoryStore } from 'agent-messaging';
import { describe, expect, test } from 'vitest';
import { createLoop } from './harness.js';

/** A memory store whose next `failures` lock renewals fail, counting every renewal it was asked for. */
function hiccupStore(failures: number) {
  const inner = createMemoryStore();
  const counts = { renewals: 0, failed: 0 };
  const store: BotStore = new Proxy(inner, {
    get(target, name: keyof BotStore) {
      const method = target[name] as (...args: unknown[]) => unknown;
      if (typeof method !== 'function') return method;
      return (...args: unknown[]) => {
        if (name === 'renewLock') {
          counts.renewals += 1;
          if (counts.failed < failures) {
            counts.failed += 1;
            return Promise.reject(new Error('store hiccup (renewLock)'));
          }
        }
        return method.apply(target, args);
      };
    },
  });
  return { store, counts };
}

describe('a lock renewal that fails', () => {
  test('once, with two thirds of the TTL left: the handler goes on and its reply completes', async () => {
    const { store, counts } = hiccupStore(1);
    const loop = await createLoop({ store, lockTtlMs: 3000 });
    const signals: unknown[] = [];
    loop.bot.on('message.received', async (ctx) => {
      // Held past the failed renewal and the next one, which goes through.
      await expect.poll(() => counts.renewals, { timeout: 20_000, interval: 50 }).toBeGreaterThanOrEqual(2);
      if (ctx.signal.aborted) signals.push(ctx.signal.reason);
      await ctx.reply('still mine');
    });
    await loop.post('hello');
    await loop.bot.idle();

    expect(counts.failed).toBe(1);
    expect(signals).toEqual([]);
    expect(loop.mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status)).toEqual([
      200,
    ]);
    const [answer] = await loop.agentMessages();
    expect(answer?.status).toBe('sent');
  });

  test('on every try until the TTL runs out: the lock counts as lost and the handler is stopped', async () => {
    const { store, counts } = hiccupStore(Number.POSITIVE_INFINITY);
    const loop = await createLoop({ store, lockTtlMs: 3000 });
    loop.bot.onError(() => {});
    const reasons: string[] = [];
    loop.bot.on('message.received', async (ctx) => {
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      reasons.push((ctx.signal.reason as Error).name);
    });
    await loop.post('hello');
    await loop.bot.idle();

    expect(reasons).toEqual(['LockLostError']);
    expect(counts.failed).toBeGreaterThanOrEqual(2);
  });
});
