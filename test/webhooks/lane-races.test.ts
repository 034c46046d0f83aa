// The races of per-conversation order that a burst of concurrent deliveries does not reach: a store
// wrapper holds each step where the race needs it (no timing), except where the rule itself is about
// time (the debounce window, the lock's renewal), which runs on real time with margins of a second or
// more: a loaded machine stalls an event loop for hundreds of milliseconds.
import {
  type BotStore,
  composeAdmit,
  composeSettle,
  createBot,
  createMemoryStore,
  type MessageContext,
} from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { createLoop, gate, type Loop } from './harness.js';

const statuses = (loop: Loop) =>
  loop.mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status);
const say = (loop: Loop, text: string) =>
  loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text });

describe('per-conversation order, at its races', () => {
  it("handles a message queued between the holder's last (empty) read and its release (Chat SDK's second bug)", async () => {
    const inner = createMemoryStore();
    let armed = false;
    let emptySeen = false;
    let refusals = 0;
    const holderFoundEmpty = gate();
    const secondRefused = gate();
    // The steps one by one (a custom store's admit and settle composed from its primitives): the
    // memory store's own settle reads and releases in one step, which no message can fall between
    // (compound-contract.ts).
    const store: BotStore = {
      ...inner,
      admit: (request) => composeAdmit(store, request),
      settle: (request) => composeSettle(store, request),
      readQueued: async (key, settled) => {
        const taken = await inner.readQueued(key, settled);
        if (armed && taken.length === 0) {
          // The holder saw an empty queue and is about to release: m2 is queued and refused meanwhile.
          armed = false;
          emptySeen = true;
          holderFoundEmpty.open();
          await secondRefused.opened;
        }
        return taken;
      },
      acquireLock: async (key, ttlMs) => {
        const lock = await inner.acquireLock(key, ttlMs);
        // Refused twice: m2 tried, listened for the release, tried again, and now waits for the wake-up.
        if (!lock && emptySeen) {
          refusals += 1;
          if (refusals === 2) secondRefused.open();
        }
        return lock;
      },
    };
    // A long TTL: a waiter that missed the release would only retry after 200 s (its poll), past the
    // test's timeout, so only the release wake-up can make this pass.
    const loop = await createLoop({ store, lockTtlMs: 600_000 });
    const handled: string[] = [];
    loop.bot.on('message.received', (ctx: MessageContext) => {
      handled.push(ctx.text);
      if (ctx.text === 'm1') armed = true;
    });
    say(loop, 'm1');
    await holderFoundEmpty.opened;
    say(loop, 'm2');
    await loop.mock.idle();
    await loop.bot.idle();
    expect(handled).toEqual(['m1', 'm2']);
    expect(statuses(loop)).toEqual([200, 200]);
  });

  it("under 'debounce' a message arriving within the window after the first took the lock joins its batch", async () => {
    const inner = createMemoryStore();
    const locked = gate();
    let enqueued = 0;
    const secondQueued = gate();
    const store: BotStore = {
      ...inner,
      acquireLock: async (key, ttlMs) => {
        const lock = await inner.acquireLock(key, ttlMs);
        if (lock) locked.open();
        return lock;
      },
      enqueue: async (...args) => {
        await inner.enqueue(...args);
        enqueued += 1;
        if (enqueued === 2) secondQueued.open();
      },
      // The first try of the lock, and the enqueue, are steps of the admit.
      admit: async (request) => {
        const admitted = await inner.admit(request);
        if (admitted.claimed && admitted.lock) locked.open();
        if (admitted.claimed && ++enqueued === 2) secondQueued.open();
        return admitted;
      },
    };
    // A window far longer than m2's way in (its post, delivery and enqueue), however busy the machine.
    const loop = await createLoop({ store, concurrency: 'debounce', debounceMs: 1000 });
    const runs: string[][] = [];
    loop.bot.on('message.received', (ctx: MessageContext) => {
      runs.push(ctx.messages.map((m) => m.parts?.[0]?.text ?? ''));
    });
    say(loop, 'm1');
    // m1 holds its conversation before m2 is even sent: only the window can gather them.
    await locked.opened;
    say(loop, 'm2');
    await secondQueued.opened;
    await loop.mock.idle();
    await loop.bot.idle();
    expect(runs).toEqual([['m1', 'm2']]);
    expect(statuses(loop)).toEqual([200, 200]);
  });

  it('keeps the conversation for a handler that runs longer than the lock TTL (renewed while it runs)', async () => {
    const inner = createMemoryStore();
    let refusals = 0;
    const waitedPastTtl = gate();
    const store: BotStore = {
      ...inner,
      acquireLock: async (key, ttlMs) => {
        const lock = await inner.acquireLock(key, ttlMs);
        // The waiter retries every TTL / 3 (500 ms): five refusals span more than the 1.5 s TTL. The
        // holder's renewals (every 500 ms) keep it through a 1 s stall; a 60 ms TTL failed at load 13.
        if (!lock) {
          refusals += 1;
          if (refusals >= 5) waitedPastTtl.open();
        }
        return lock;
      },
    };
    const loop = await createLoop({ store, lockTtlMs: 1500 });
    let running = 0;
    let most = 0;
    const aborted: boolean[] = [];
    const secondStarted = gate();
    const firstStarted = gate();
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      running += 1;
      most = Math.max(most, running);
      if (ctx.text === 'm1') {
        firstStarted.open();
        // Ends when m2 has waited past the TTL, or (the rule broken) when m2 took the lock.
        await Promise.race([waitedPastTtl.opened, secondStarted.opened]);
      } else secondStarted.open();
      aborted.push(ctx.signal.aborted);
      running -= 1;
    });
    say(loop, 'm1');
    await firstStarted.opened;
    say(loop, 'm2');
    await loop.mock.idle();
    await loop.bot.idle();
    expect(refusals).toBeGreaterThanOrEqual(5);
    expect(most).toBe(1);
    expect(aborted).toEqual([false, false]);
    expect(statuses(loop)).toEqual([200, 200]);
  });

  it('a message its holder completed but died before removing from the queue is not run again by the next holder', async () => {
    const inner = createMemoryStore();
    let armed = false; // the setup's webhook.test is marked done too: only m1's counts
    let frozen = false;
    const died = gate();
    const hang = () => new Promise<never>(() => {});
    // Instance a, on a store without the compound steps (each step its own call, as a custom store
    // may be): once it marked m1 done, it dies: its next read of the queue (the one that would
    // remove m1) and its lock renewals never come back.
    const dying: BotStore = {
      ...inner,
      admit: (request) => composeAdmit(dying, request),
      settle: (request) => composeSettle(dying, request),
      set: async (key, value, ttlMs) => {
        await inner.set(key, value, ttlMs);
        if (armed && key.startsWith('dedupe:') && value === 'done') {
          frozen = true;
          died.open();
        }
      },
      readQueued: (key, settled) => (frozen ? hang() : inner.readQueued(key, settled)),
      renewLock: (lock, ttlMs) => (frozen ? hang() : inner.renewLock(lock, ttlMs)),
    };
    // b's lock outlasts a 1 s stall of its renewals; a's dead one is waited out once (1.5 s).
    const loop = await createLoop({ store: dying, lockTtlMs: 1500, ackTimeoutMs: 50 });
    const other = createBot({
      apiKey: loop.apiKey,
      webhookSecret: loop.secret,
      ...loop.connection,
      store: inner,
      lockTtlMs: 1500,
    });
    const handled: string[] = [];
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      handled.push(`a:${ctx.text}`);
      await ctx.reply(`re: ${ctx.text}`);
    });
    other.on('message.received', async (ctx: MessageContext) => {
      handled.push(`b:${ctx.text}`);
      await ctx.reply(`re: ${ctx.text}`);
    });
    // m1 reaches a, everything else b.
    loop.route(async (request) => {
      const text = ((await request.clone().json()) as { message?: { parts?: { text?: string }[] } }).message
        ?.parts?.[0]?.text;
      return (text === 'm1' ? loop.bot : other).fetch(request);
    });
    armed = true;
    say(loop, 'm1');
    await died.opened;
    await loop.mock.idle(); // answered 409 (ackTimeoutMs): a is stuck after m1
    say(loop, 'm2'); // b finds m1 still queued behind a's expired lock, but done: it runs m2 only
    await loop.mock.idle();
    await other.idle();
    expect(handled).toEqual(['a:m1', 'b:m2']);
    expect(statuses(loop)).toEqual([409, 200]);
    // m1's retry (to a, whose claim step still works) finds it done: 200 duplicate, not run again.
    await loop.mock.clock.advance(5);
    await loop.mock.idle();
    expect(statuses(loop)).toEqual([409, 200, 200]);
    expect(handled).toEqual(['a:m1', 'b:m2']);
    expect((await loop.agentMessages()).map((m) => m.fallback_text)).toEqual(['re: m1', 're: m2']);
  });
});
