// Order with gaps (docs/bot.md, "Order"): under 'queue' and 'interrupt' a message waits, at most
// `gapWaitMs`, for a user message before it whose delivery failed or whose run awaits its retry; one
// history read tells a missing user message from the agent's own messages and tombstones.
import { type BotOptions, createBot, createMemoryStore } from 'agent-messaging';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLoop, failDeliveries, gate, historyReads, type Loop } from './harness.js';

afterEach(() => {
  delete process.env.AGENT_MESSAGING_DEBUG;
});

/** A loop whose deliveries of a text in `failing` are answered 502 before they reach the bot. */
async function gappyLoop(options: Partial<BotOptions>) {
  const loop = await createLoop(options);
  const failing = failDeliveries(loop);
  const seen: string[] = [];
  loop.bot.on('message.received', async (ctx) => {
    seen.push(ctx.text);
    await ctx.reply(`Echo: ${ctx.text}`);
  });
  return { loop, failing, seen };
}

/** The answers to each message.received delivery's attempts, the messages in the order first tried. */
function attemptsByMessage(loop: Loop): (number | null)[][] {
  const byEvent = new Map<string, (number | null)[]>();
  for (const delivery of loop.mock.deliveries) {
    if (delivery.type !== 'message.received') continue;
    byEvent.set(delivery.event_id, [...(byEvent.get(delivery.event_id) ?? []), delivery.status]);
  }
  return [...byEvent.values()];
}

/** The usual gap: 'two' is answered 502 before the bot (the service retries it 5 s later), 'three' follows. */
async function postAGap(loop: Loop, failing: Set<string>) {
  failing.add('two');
  await loop.post('two');
  await loop.post('three');
}

describe('order with gaps', () => {
  it("a message waits for a predecessor whose delivery failed, and runs after the service's retry brought it", async () => {
    const { loop, failing, seen } = await gappyLoop({ gapWaitMs: 60_000, ackTimeoutMs: 1000 });
    await loop.post('one'); // sequence 1, its reply 2
    failing.add('two');
    await loop.post('two'); // sequence 3: answered 502, retried 5 s later
    // Sequence 4 waits for 3: past ackTimeoutMs its delivery is answered 409 and the wait goes on.
    await loop.post('three');
    expect(seen).toEqual(['one']);
    failing.clear();
    await loop.mock.clock.advance(6);
    await loop.mock.idle();
    await loop.bot.idle();
    expect(seen).toEqual(['one', 'two', 'three']);
    expect((await loop.agentMessages()).map((message) => message.fallback_text)).toEqual([
      'Echo: one',
      'Echo: two',
      'Echo: three',
    ]);
    // One history read, for the gap before sequence 4: 2 was the agent's reply, 3 a user's message.
    expect(historyReads(loop)).toEqual([{ before: '4', limit: '2' }]);
    // one: 200; two: 502, then 200 once retried; three: 409 (still waiting), then 200 once it ran.
    expect(attemptsByMessage(loop)).toEqual([[200], [502, 200], [409, 200]]);
  });

  it('waits no longer than gapWaitMs: the message then runs, and the missing one still runs after it', async () => {
    process.env.AGENT_MESSAGING_DEBUG = '1';
    const lines: { message: string; fields: Record<string, unknown> }[] = [];
    const logger = (message: string, fields: Record<string, unknown>) => {
      if (fields.level === 'debug' && /missing message/.test(message)) lines.push({ message, fields });
    };
    const { loop, failing, seen } = await gappyLoop({ gapWaitMs: 1500, ack: 'immediately', logger });
    delete process.env.AGENT_MESSAGING_DEBUG;
    await loop.post('one');
    await loop.bot.idle(); // its reply takes sequence 2
    await postAGap(loop, failing);
    await loop.bot.idle(); // the wait for 'two' runs out (1.5 s), then 'three' runs
    expect(seen).toEqual(['one', 'three']);
    failing.clear();
    await loop.mock.clock.advance(6);
    await loop.mock.idle();
    await loop.bot.idle();
    expect(seen).toEqual(['one', 'three', 'two']);
    expect(historyReads(loop)).toEqual([{ before: '4', limit: '2' }]);
    // The debug log says what was waited for, and that order was given up for it.
    expect(lines).toEqual([
      {
        message: 'waiting for a missing message',
        fields: expect.objectContaining({ sequence: 4, missing: '3' }),
      },
      {
        message: 'gave up waiting for a missing message: ran out of order',
        fields: expect.objectContaining({ sequence: 4, missing: '3' }),
      },
    ]);
  });

  it("the agent's own messages and unsent tombstones are no gap: the next message runs at once", async () => {
    const { loop, seen } = await gappyLoop({ gapWaitMs: 60_000, ack: 'immediately' });
    await loop.post('one'); // 1, its reply 2
    await loop.bot.idle();
    // The agent posts on its own (3) and takes one back (4, a tombstone): no delivery brings either.
    await loop.bot.client.messages.send(loop.conversationId, { text: 'by the way' });
    const { message } = await loop.bot.client.messages.send(loop.conversationId, { text: 'oops' });
    await loop.bot.client.messages.unsend(message.id);
    await loop.post('two'); // 5
    await loop.bot.idle();
    expect(seen).toEqual(['one', 'two']);
    expect(historyReads(loop)).toEqual([{ before: '5', limit: '3' }]);
  });

  it('a run that failed holds its successor until the retry ran it', async () => {
    const loop = await createLoop({ gapWaitMs: 60_000, ackTimeoutMs: 1000 });
    const seen: string[] = [];
    loop.bot.on('message.received', async (ctx) => {
      seen.push(ctx.text);
      if (ctx.text === 'one' && seen.length === 1) throw new Error('the model was down');
      await ctx.reply(`Echo: ${ctx.text}`);
    });
    loop.bot.onError(() => undefined);
    await loop.post('one'); // 500: retried 5 s later
    await loop.post('two');
    expect(seen).toEqual(['one']);
    await loop.mock.clock.advance(6);
    await loop.mock.idle();
    await loop.bot.idle();
    expect(seen).toEqual(['one', 'one', 'two']);
    // The failed run set the record below its sequence; the next holder read history once to see
    // that sequence 1 is a user's message.
    expect(historyReads(loop)).toEqual([{ before: '2', limit: '1' }]);
    expect((await loop.agentMessages()).map((m) => m.fallback_text)).toEqual(['Echo: one', 'Echo: two']);
  });

  it("under 'interrupt' the newer message stops the run, waits for the missing one, and both run as one batch", async () => {
    const loop = await createLoop({ concurrency: 'interrupt', gapWaitMs: 60_000, ack: 'immediately' });
    const failing = failDeliveries(loop);
    const batches: string[][] = [];
    const started = gate();
    loop.bot.on('message.received', async (ctx) => {
      batches.push(ctx.messages.map((message) => message.fallback_text ?? ''));
      if (ctx.text !== 'one') return void (await ctx.reply(`Echo: ${ctx.text}`));
      started.open();
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
    });
    await loop.post('one');
    await started.opened;
    failing.add('two');
    await loop.post('two'); // 502
    await loop.post('three'); // interrupts 'one', then waits for 'two'
    // The holder read history for the gap before 'three': it waits now.
    await vi.waitFor(() => expect(historyReads(loop)).toHaveLength(1), { timeout: 10_000 });
    expect(batches).toEqual([['one']]);
    failing.clear();
    await loop.mock.clock.advance(6);
    await loop.mock.idle();
    await loop.bot.idle();
    expect(batches).toEqual([['one'], ['two', 'three']]);
    expect(historyReads(loop)).toEqual([{ before: '3', limit: '1' }]);
    expect((await loop.agentMessages()).map((message) => message.fallback_text)).toEqual(['Echo: three']);
  });

  it('a bot that closes while a message waits for a gap lets it go at once: the next instance runs both, in order', async () => {
    const store = createMemoryStore();
    const { loop, failing, seen } = await gappyLoop({ store, gapWaitMs: 60_000, ack: 'immediately' });
    await loop.post('one');
    await loop.bot.idle();
    await postAGap(loop, failing); // 'three' waits for 'two', its delivery answered 202
    await vi.waitFor(() => expect(historyReads(loop)).toHaveLength(1), { timeout: 10_000 });
    await loop.bot.close(); // resolves without the 60 s wait: the holder lets the conversation go
    const next = createBot({ apiKey: loop.apiKey, webhookSecret: loop.secret, ...loop.connection, store });
    const nextSeen: string[] = [];
    next.on('message.received', (ctx) => {
      nextSeen.push(ctx.text);
    });
    failing.clear();
    loop.route((request) => next.fetch(request));
    await loop.mock.clock.advance(6); // the retry of 'two' reaches the next instance
    await loop.mock.idle();
    await next.idle();
    expect(seen).toEqual(['one']);
    expect(nextSeen).toEqual(['two', 'three']);
  });

  it('a conversation whose record expired (18 h without a run) starts afresh: its next message runs at once', async () => {
    let offsetMs = 0;
    const store = createMemoryStore({ now: () => Date.now() + offsetMs });
    const { loop, failing, seen } = await gappyLoop({ store, gapWaitMs: 60_000, ack: 'immediately' });
    await loop.post('one');
    await loop.bot.idle();
    expect(await store.get(`order:${loop.conversationId}`)).toBe('1');
    offsetMs = 18 * 60 * 60 * 1000 + 1000;
    expect(await store.get(`order:${loop.conversationId}`)).toBeUndefined();
    await postAGap(loop, failing);
    await loop.bot.idle();
    expect(seen).toEqual(['one', 'three']);
    expect(historyReads(loop)).toEqual([]);
    expect(await store.get(`order:${loop.conversationId}`)).toBe('4');
  });

  it("'concurrent' never waits, and gapWaitMs must be a number of milliseconds >= 0", async () => {
    const { loop, failing, seen } = await gappyLoop({ concurrency: 'concurrent', gapWaitMs: 60_000 });
    await loop.post('one');
    await postAGap(loop, failing);
    await loop.bot.idle();
    expect(seen).toEqual(['one', 'three']);
    expect(historyReads(loop)).toEqual([]);
    await expect(createLoop({ gapWaitMs: -1 })).rejects.toThrow(/gapWaitMs/);
  });
});
