// A memory store whose methods were replaced on the object itself (instrumented, or made to fail in a
// test) must be used through those methods: the bot's synchronous steps are only for a memory store
// as created. A copy or a Proxy was already another object; this is the same object, patched.
import { createMemoryStore, type MessageContext } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { createLoop, type Loop } from './harness.js';

const statuses = (loop: Loop) =>
  loop.mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status);

describe('a memory store patched in place', () => {
  for (const concurrency of ['queue', 'interrupt'] as const) {
    it(`under '${concurrency}', a settle replaced to fail answers 503 and the retry runs the message`, async () => {
      const store = createMemoryStore();
      const settle = store.settle?.bind(store);
      let down = true;
      let settles = 0;
      store.settle = async (request) => {
        settles += 1;
        if (down) throw new Error('store down (settle)');
        return (settle as NonNullable<typeof settle>)(request);
      };
      // The failed holder's lock expires on its own (lockTtlMs), so the retry's wait is short; a running
      // holder's renewals (every 500 ms) keep it through a stall of a loaded machine's event loop.
      const loop = await createLoop({ store, concurrency, lockTtlMs: 1500 });
      let runs = 0;
      loop.bot.on('message.received', async (ctx: MessageContext) => {
        runs += 1;
        await ctx.reply(`re: ${ctx.text}`);
      });
      loop.bot.onError(() => undefined);
      await loop.post('hello');
      await loop.bot.idle();
      expect(settles).toBeGreaterThan(0);
      expect(statuses(loop)).toEqual([503]);
      down = false;
      await loop.mock.clock.advance(5);
      await loop.mock.idle();
      await loop.bot.idle();
      expect(statuses(loop)).toEqual([503, 200]);
      expect(runs).toBe(2);
    });
  }

  it("under 'concurrent', a setIfAbsent replaced in place is the claim that is made", async () => {
    const store = createMemoryStore();
    const setIfAbsent = store.setIfAbsent.bind(store);
    const claimed: string[] = [];
    store.setIfAbsent = async (key, value, ttlMs) => {
      claimed.push(key);
      return setIfAbsent(key, value, ttlMs);
    };
    const loop = await createLoop({ store, concurrency: 'concurrent' });
    loop.bot.on('message.received', (ctx: MessageContext) => ctx.reply(`re: ${ctx.text}`));
    await loop.post('hello');
    await loop.bot.idle();
    const webhookId = loop.mock.deliveries.find((d) => d.type === 'message.received')?.event_id;
    expect(statuses(loop)).toEqual([200]);
    expect(claimed).toContain(`dedupe:${webhookId}`);
  });
});
