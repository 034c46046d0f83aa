// The conversation lock: a waiting delivery is answered in time (409) and handled later, two
// instances on one store keep one order, a lost lock or an expired lifetime fires ctx.signal.
import { type BotStore, createBot, createMemoryStore, type MessageContext } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { createLoop, gate, type Loop, routeInTurn } from './harness.js';

/** The answers to message.received deliveries, in order. */
const statuses = (loop: Loop) =>
  loop.mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status);

describe('the conversation lock', () => {
  it('answers a delivery waiting for its conversation with 409 in time, handles it later, and bot.idle() waits for it', async () => {
    const loop = await createLoop({ ackTimeoutMs: 50 });
    const first = gate();
    const started = gate();
    const handled: string[] = [];
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      if (ctx.text === 'one') {
        started.open();
        await first.opened;
      }
      handled.push(ctx.text);
      await ctx.reply(`re: ${ctx.text}`);
    });
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'one' });
    await started.opened;
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'two' });
    await loop.mock.idle();
    // Both answered 409 (past ackTimeoutMs), not a 2xx: the first running, the second waiting for the lock.
    expect(statuses(loop)).toEqual([409, 409]);
    expect(handled).toEqual([]);
    first.open();
    await loop.bot.idle();
    expect(handled).toEqual(['one', 'two']);
    expect((await loop.agentMessages()).map((m) => m.fallback_text)).toEqual(['re: one', 're: two']);
    // The service's retries find both done: 200 duplicate, nothing run twice.
    await loop.mock.clock.advance(5);
    await loop.mock.idle();
    expect(statuses(loop)).toEqual([409, 409, 200, 200]);
    expect(handled).toEqual(['one', 'two']);
  });

  it('keeps one order across two instances sharing a store, deliveries alternating between them', async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store });
    const other = createBot({ apiKey: loop.apiKey, webhookSecret: loop.secret, ...loop.connection, store });
    let running = 0;
    let most = 0;
    const byInstance = { a: 0, b: 0 };
    const handler = (name: 'a' | 'b') => async (ctx: MessageContext) => {
      running += 1;
      most = Math.max(most, running);
      byInstance[name] += 1;
      for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
      await ctx.reply(`re: ${ctx.text}`);
      running -= 1;
    };
    loop.bot.on('message.received', handler('a'));
    other.on('message.received', handler('b'));
    routeInTurn(loop, [loop.bot, other]);
    const texts = Array.from({ length: 8 }, (_, i) => `m${i + 1}`);
    for (const text of texts) loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text });
    await loop.mock.idle();
    await Promise.all([loop.bot.idle(), other.idle()]);
    expect((await loop.agentMessages()).map((m) => m.fallback_text)).toEqual(texts.map((t) => `re: ${t}`));
    expect(most).toBe(1);
    expect(byInstance.a + byInstance.b).toBe(8);
    // Each delivery got the real answer, also when the other instance ran its message.
    expect(statuses(loop)).toEqual(texts.map(() => 200));
  });

  it('answers 500 for a delivery whose message failed on the other instance, so the service retries it', async () => {
    const inner = createMemoryStore();
    const secondQueued = gate();
    let queued = 0;
    // The test waits until m2 is in the conversation's queue (behind a's lock) before m1 ends.
    const store: BotStore = {
      ...inner,
      enqueue: async (...args) => {
        await inner.enqueue(...args);
        queued += 1;
        if (queued === 2) secondQueued.open();
      },
      // The enqueue is a step of the admit.
      admit: async (request) => {
        const admitted = await inner.admit(request);
        if (admitted.claimed && ++queued === 2) secondQueued.open();
        return admitted;
      },
    };
    const loop = await createLoop({ store });
    const other = createBot({ apiKey: loop.apiKey, webhookSecret: loop.secret, ...loop.connection, store });
    const first = gate();
    const started = gate();
    let failures = 0;
    const ran: string[] = [];
    const handler = (name: string) => async (ctx: MessageContext) => {
      ran.push(`${name}:${ctx.text}`);
      if (ctx.text === 'm1') {
        started.open();
        await first.opened;
      }
      if (ctx.text === 'm2' && failures === 0) {
        failures += 1;
        throw new Error('model down');
      }
    };
    loop.bot.on('message.received', handler('a')).onError(() => undefined);
    other.on('message.received', handler('b')).onError(() => undefined);
    routeInTurn(loop, [loop.bot, other]);
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'm1' });
    await started.opened;
    // m2 reaches instance b while a holds the conversation; a runs it after m1, and it fails there.
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'm2' });
    await secondQueued.opened;
    first.open();
    await loop.mock.idle();
    expect(ran.slice(0, 2)).toEqual(['a:m1', 'a:m2']);
    expect(statuses(loop)).toEqual([200, 500]);
    await loop.mock.clock.advance(5);
    await loop.mock.idle();
    expect(statuses(loop)).toEqual([200, 500, 200]);
    expect(ran).toHaveLength(3);
  });

  it('fires ctx.signal when the lock is lost, and the delivery fails so the service retries it', async () => {
    const inner = createMemoryStore();
    let renewals = 0;
    const store: BotStore = {
      ...inner,
      renewLock: async () => {
        renewals += 1;
        return false;
      },
    };
    // Its first renewal (at a third of the TTL) is the loss; the retry's run ends long before its own.
    const loop = await createLoop({ store, lockTtlMs: 1500 });
    const reasons: string[] = [];
    let runs = 0;
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      runs += 1;
      if (runs > 1) return;
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      reasons.push((ctx.signal.reason as Error).name);
    });
    loop.bot.onError(() => undefined);
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'hello' });
    await loop.mock.idle();
    expect(renewals).toBe(1);
    expect(reasons).toEqual(['LockLostError']);
    expect(statuses(loop)).toEqual([500]);
    // The retry runs the handler again.
    await loop.mock.clock.advance(5);
    await loop.mock.idle();
    expect(runs).toBe(2);
    expect(statuses(loop)).toEqual([500, 200]);
  });

  it.each(['queue', 'concurrent'] as const)(
    'fires ctx.signal with a TimeoutError past maxHandlerMs (%s)',
    async (concurrency) => {
      const loop = await createLoop({ maxHandlerMs: 40, concurrency });
      const reasons: string[] = [];
      loop.bot.on('message.received', async (ctx: MessageContext) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        reasons.push((ctx.signal.reason as Error).name);
      });
      loop.bot.onError(() => undefined);
      await loop.post('slow');
      expect(reasons).toEqual(['TimeoutError']);
      expect(statuses(loop)).toEqual([500]);
    },
  );
});
