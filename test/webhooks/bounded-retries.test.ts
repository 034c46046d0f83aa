// A message whose runs keep failing, or keep running past maxHandlerMs, is tried `maxAttempts` times
// and then given up: onError gets a MessageGivenUpError, its delivery is answered 2xx and marked done,
// and its conversation moves on. A run that ignores its signal is never run a second time while it may
// still be running (issue 23, items 1 and 3). On the memory store; redis-bounded-retries.test.ts runs
// the same on Redis across two instances.
import {
  createBot,
  createMemoryStore,
  type MessageContext,
  MessageGivenUpError,
  RequestAbortedError,
} from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { createLoop, gate, type Loop } from './harness.js';

const say = (loop: Loop, text: string) =>
  loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text }).message;

/** The answers to every delivery of the event `webhookId`, in order. */
const answers = (loop: Loop, webhookId: string | undefined) =>
  loop.mock.deliveries.filter((d) => d.event_id === webhookId).map((d) => d.status);

/** Lets the service's retry schedule run `seconds` on, then waits for what it delivered. */
async function retryAfter(loop: Loop, seconds: number) {
  await loop.mock.clock.advance(seconds);
  await loop.mock.idle();
  await loop.bot.idle();
}

describe('bounded retries', () => {
  it('gives a message that throws every time up after maxAttempts runs; the conversation moves on', async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store });
    const ids = new Map<string, string>();
    let poisonRuns = 0;
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      ids.set(ctx.text, ctx.webhookId);
      if (ctx.text === 'poison') {
        poisonRuns += 1;
        throw new Error('model overloaded');
      }
      await ctx.reply(`re: ${ctx.text}`);
    });
    const errors: unknown[] = [];
    loop.bot.onError((error) => {
      errors.push(error);
    });
    const poison = await loop.post('poison');
    await retryAfter(loop, 5);
    await retryAfter(loop, 300);
    const id = ids.get('poison');
    // The third run failed too: given up, so answered 200 and the service stops.
    expect(answers(loop, id)).toEqual([500, 500, 200]);
    expect(poisonRuns).toBe(3);
    expect(await store.get(`dedupe:${id}`)).toBe('done');
    const given = errors.filter((error) => MessageGivenUpError.is(error));
    expect(given).toHaveLength(1);
    expect(given[0]).toMatchObject({ webhookId: id, messageId: poison.id, attempts: 3, reason: 'attempts' });
    expect(((given[0] as Error).cause as Error).message).toBe('model overloaded');
    // Nothing comes back, and the next message is answered at once.
    await retryAfter(loop, 1800);
    expect(poisonRuns).toBe(3);
    await loop.post('next');
    expect(answers(loop, ids.get('next'))).toEqual([200]);
    expect((await loop.agentMessages()).map((m) => m.fallback_text)).toEqual(['re: next']);
    expect(await store.readQueued(`queue:${loop.conversationId}`)).toEqual([]);
  });

  it.each(['queue', 'concurrent'] as const)(
    'honours maxAttempts: 1 gives up at the first failure (%s)',
    async (concurrency) => {
      const loop = await createLoop({ maxAttempts: 1, concurrency });
      const errors: unknown[] = [];
      loop.bot.onError((error) => {
        errors.push(error);
      });
      loop.bot.on('message.received', () => {
        throw new Error('always');
      });
      await loop.post('poison');
      const id = loop.mock.deliveries.find((d) => d.type === 'message.received')?.event_id;
      expect(answers(loop, id)).toEqual([200]);
      expect(errors.filter((error) => MessageGivenUpError.is(error))).toMatchObject([{ attempts: 1 }]);
    },
  );

  it('refuses a maxAttempts that is not an integer of at least 1', () => {
    for (const maxAttempts of [0, 1.5, -1, Number.NaN]) {
      expect(() =>
        createBot({ apiKey: 'am_test', webhookSecret: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=', maxAttempts }),
      ).toThrow(/maxAttempts: must be an integer >= 1/);
    }
  });

  it("under 'queue', a run past maxHandlerMs fails its attempt at once and the next message runs, not 409", async () => {
    const store = createMemoryStore();
    // The slow runs wait for their signal; 'next' must be answered within its ackTimeoutMs (8 s).
    // gapWaitMs 0: 'next' does not wait for the failed run's retry (order-gaps.test.ts shows that wait).
    const loop = await createLoop({ store, maxHandlerMs: 1000, gapWaitMs: 0 });
    const ids = new Map<string, string>();
    const ran: string[] = [];
    const started = gate();
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      ids.set(ctx.text, ctx.webhookId);
      ran.push(ctx.text);
      if (ctx.text !== 'slow') return void (await ctx.reply(`re: ${ctx.text}`));
      started.open();
      // A model that stops when told to: the run ends with its signal.
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
    });
    const errors: unknown[] = [];
    loop.bot.onError((error) => {
      errors.push(error);
    });
    say(loop, 'slow');
    await started.opened;
    say(loop, 'next');
    await loop.mock.idle();
    await loop.bot.idle();
    expect(answers(loop, ids.get('slow'))).toEqual([500]);
    expect(answers(loop, ids.get('next'))).toEqual([200]);
    expect(ran).toEqual(['slow', 'next']);
    // Each retry runs it once more, to its bound; the third is given up.
    await retryAfter(loop, 5);
    await retryAfter(loop, 300);
    expect(ran).toEqual(['slow', 'next', 'slow', 'slow']);
    expect(answers(loop, ids.get('slow'))).toEqual([500, 500, 200]);
    const given = errors.filter((error) => MessageGivenUpError.is(error));
    expect(given).toMatchObject([{ webhookId: ids.get('slow'), attempts: 3, reason: 'attempts' }]);
    expect(((given[0] as Error).cause as Error).name).toBe('TimeoutError');
    await retryAfter(loop, 1800);
    expect(ran).toHaveLength(4);
    expect((await loop.agentMessages()).map((m) => m.fallback_text)).toEqual(['re: next']);
    expect(await store.readQueued(`queue:${loop.conversationId}`)).toEqual([]);
    expect(await store.acquireLock(`conversation:${loop.conversationId}`, 1000)).toBeDefined();
  });

  it('never runs again a message whose run ignores its signal: given up after its grace, its late reply refused', async () => {
    const store = createMemoryStore();
    // maxHandlerMs is 1 s and the grace (one lockTtlMs) 1.5 s; the holder keeps its lock throughout,
    // renewed every 500 ms, through a 1 s stall of a loaded machine.
    const loop = await createLoop({ store, maxHandlerMs: 1000, lockTtlMs: 1500 });
    const ids = new Map<string, string>();
    const ran: string[] = [];
    const aborted = gate();
    const hung = gate();
    const lateTried = gate();
    let late: unknown;
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      ids.set(ctx.text, ctx.webhookId);
      ran.push(ctx.text);
      if (ctx.text !== 'stuck') return void (await ctx.reply(`re: ${ctx.text}`));
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      aborted.open();
      await hung.opened; // a handler that goes on past its signal
      late = await ctx.reply('LATE stuck').catch((error: unknown) => error);
      lateTried.open();
    });
    const errors: unknown[] = [];
    loop.bot.onError((error) => {
      errors.push(error);
    });
    say(loop, 'stuck');
    await aborted.opened;
    say(loop, 'next');
    await loop.mock.idle();
    await loop.bot.idle();
    // Given up at once, while it still runs: settled as handled, and the conversation moved on.
    expect(ran).toEqual(['stuck', 'next']);
    expect(answers(loop, ids.get('stuck'))).toEqual([200]);
    expect(answers(loop, ids.get('next'))).toEqual([200]);
    expect(await store.get(`dedupe:${ids.get('stuck')}`)).toBe('done');
    const given = errors.filter((error) => MessageGivenUpError.is(error));
    expect(given).toMatchObject([{ webhookId: ids.get('stuck'), attempts: 1, reason: 'unresponsive' }]);
    hung.open();
    await lateTried.opened;
    expect(RequestAbortedError.is(late)).toBe(true);
    expect(((late as Error).cause as Error).name).toBe('TimeoutError');
    await retryAfter(loop, 300);
    expect(ran).toEqual(['stuck', 'next']);
    expect((await loop.agentMessages()).map((m) => m.fallback_text)).toEqual(['re: next']);
  });
});
