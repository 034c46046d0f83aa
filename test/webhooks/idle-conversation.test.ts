// 'queue' on the memory store, for a conversation with nothing queued and its lock free: what arrives
// while its message runs runs after it, in order; a failed or timed-out run is not marked done and its
// retry runs it; under 'interrupt', a newer message stops it. A run that ignores its signal is in
// bounded-retries.test.ts.
import { createMemoryStore, type MessageContext } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { createLoop, gate, type Loop } from './harness.js';

/** The answers to message.received deliveries, in order. */
const statuses = (loop: Loop) =>
  loop.mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status);

const say = (loop: Loop, text: string) =>
  loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text }).message;

/** Turns the event loop until the conversation's queue holds a message with each of `texts`. */
async function queuedReach(store: ReturnType<typeof createMemoryStore>, loop: Loop, texts: string[]) {
  const holds = (queued: string[]) =>
    texts.every((text) => queued.some((member) => member.includes(`"fallback_text":"${text}"`)));
  while (!holds(await store.readQueued(`queue:${loop.conversationId}`))) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("'queue' on an idle conversation of the memory store", () => {
  it('runs the messages that arrive while its first handler runs after it, in order, one at a time', async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store });
    const firstStarted = gate();
    const first = gate();
    const ran: string[] = [];
    let running = 0;
    let most = 0;
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      running += 1;
      most = Math.max(most, running);
      ran.push(ctx.text);
      if (ctx.text === 'm1') {
        firstStarted.open();
        await first.opened;
      }
      await ctx.reply(`re: ${ctx.text}`);
      running -= 1;
    });
    const posted = [say(loop, 'm1')];
    await firstStarted.opened;
    posted.push(say(loop, 'm2'), say(loop, 'm3'));
    // m2 and m3 are queued behind m1, which is still running.
    await queuedReach(store, loop, ['m2', 'm3']);
    expect(ran).toEqual(['m1']);
    first.open();
    await loop.mock.idle();
    await loop.bot.idle();
    expect(ran).toEqual(['m1', 'm2', 'm3']);
    expect(most).toBe(1);
    expect(statuses(loop)).toEqual([200, 200, 200]);
    const replies = await loop.agentMessages();
    expect(replies.map((m) => m.fallback_text)).toEqual(['re: m1', 're: m2', 're: m3']);
    expect(replies.map((m) => m.reply_to?.message_id)).toEqual(posted.map((m) => m.id));
    // Nothing stranded: the queue is empty and the lock free.
    expect(await store.readQueued(`queue:${loop.conversationId}`)).toEqual([]);
    expect(await store.acquireLock(`conversation:${loop.conversationId}`, 1000)).toBeDefined();
  });

  it('does not mark a throwing handler done, leaves nothing queued, and the retry runs it', async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store });
    let runs = 0;
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      runs += 1;
      if (runs === 1) throw new Error('model overloaded');
      await ctx.reply(`re: ${ctx.text}`);
    });
    const errors: unknown[] = [];
    loop.bot.onError((error) => {
      errors.push(error);
    });
    await loop.post('hello');
    expect(statuses(loop)).toEqual([500]);
    const webhookId = loop.mock.deliveries.find((d) => d.type === 'message.received')?.event_id;
    expect(await store.get(`dedupe:${webhookId}`)).toBeUndefined();
    expect(await store.readQueued(`queue:${loop.conversationId}`)).toEqual([]);
    await loop.mock.clock.advance(5);
    await loop.mock.idle();
    await loop.bot.idle();
    expect(runs).toBe(2);
    expect(statuses(loop)).toEqual([500, 200]);
    expect(await store.get(`dedupe:${webhookId}`)).toBe('done');
    expect((errors[0] as Error).message).toBe('model overloaded');
    expect((await loop.agentMessages()).map((m) => m.fallback_text)).toEqual(['re: hello']);
  });

  it('fails a run stopped at maxHandlerMs, leaves nothing queued and the lock free; the retry runs it', async () => {
    const store = createMemoryStore();
    // The first run waits for its stop; the retry's reply must fit in maxHandlerMs on a loaded machine,
    // its lock renewed every 500 ms through a 1 s stall.
    const loop = await createLoop({ store, maxHandlerMs: 1000, lockTtlMs: 1500 });
    const reasons: string[] = [];
    let runs = 0;
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      runs += 1;
      if (runs === 1) {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        reasons.push((ctx.signal.reason as Error).name);
        return;
      }
      await ctx.reply(`re: ${ctx.text}`);
    });
    loop.bot.onError(() => undefined);
    await loop.post('slow');
    await loop.bot.idle();
    expect(reasons).toEqual(['TimeoutError']);
    expect(statuses(loop)).toEqual([500]);
    // The run ended with its signal: its holder settled it as failed and moved on at once.
    expect(await store.readQueued(`queue:${loop.conversationId}`)).toEqual([]);
    expect(await store.acquireLock(`conversation:${loop.conversationId}`, 1)).toBeDefined();
    await loop.mock.clock.advance(5);
    await loop.mock.idle();
    await loop.bot.idle();
    expect(runs).toBe(2);
    expect(statuses(loop)).toEqual([500, 200]);
    expect((await loop.agentMessages()).map((m) => m.fallback_text)).toEqual(['re: slow']);
    expect(await store.readQueued(`queue:${loop.conversationId}`)).toEqual([]);
  });

  it("under 'interrupt', a newer message stops the idle conversation's run, which is done, not retried", async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store, concurrency: 'interrupt' });
    const firstStarted = gate();
    const reasons: string[] = [];
    const ran: string[] = [];
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      ran.push(ctx.text);
      if (ctx.text === 'm1') {
        firstStarted.open();
        // A model still thinking: only the interruption ends it.
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        reasons.push((ctx.signal.reason as Error).name);
        return;
      }
      await ctx.reply(`re: ${ctx.text}`);
    });
    say(loop, 'm1');
    await firstStarted.opened;
    const second = say(loop, 'm2');
    await loop.mock.idle();
    await loop.bot.idle();
    expect(reasons).toEqual(['InterruptedError']);
    expect(ran).toEqual(['m1', 'm2']);
    expect(statuses(loop)).toEqual([200, 200]);
    const firstId = loop.mock.deliveries.find((d) => d.type === 'message.received')?.event_id;
    expect(await store.get(`dedupe:${firstId}`)).toBe('done');
    // Nothing comes back: no retry runs m1 again.
    await loop.mock.clock.advance(5);
    await loop.mock.idle();
    expect(ran).toEqual(['m1', 'm2']);
    const replies = await loop.agentMessages();
    expect(replies.map((m) => [m.fallback_text, m.reply_to?.message_id])).toEqual([['re: m2', second.id]]);
    expect(await store.readQueued(`queue:${loop.conversationId}`)).toEqual([]);
  });
});
