import type { RequestLogEntry } from 'agent-messaging/testing';
import { describe, expect, it, vi } from 'vitest';
import { createLoop, type Loop } from './harness.js';

/** A model's token stream: `words`, then a failure when `failAfter` words were yielded. */
async function* model(words: readonly string[], failAfter?: number) {
  for (const [index, word] of words.entries()) {
    if (index === failAfter) throw new Error('the model stream broke');
    yield word;
  }
}

const isStart = (entry: RequestLogEntry) => entry.method === 'POST' && entry.query.stream === 'true';
const writesText = (entry: RequestLogEntry) => /\/(append|complete)$/.test(entry.path);

/** The user posts, the first delivery settles, then the clock fires the 5 s retry. */
async function postAndRetry(loop: Loop, text: string) {
  await loop.post(text);
  const afterFirst = loop.mock.requests.length;
  await loop.mock.clock.advance(5);
  await loop.mock.idle();
  const received = loop.mock.deliveries.filter((delivery) => delivery.type === 'message.received');
  return {
    statuses: received.map((delivery) => [delivery.attempt, delivery.status]),
    first: loop.mock.requests.slice(0, afterFirst),
    retry: loop.mock.requests.slice(afterFirst),
  };
}

describe('a retried delivery whose first run already completed its streamed reply', () => {
  it('answers 200 on the retry of a delivery whose text source broke: the cut reply stays, marked, and the retry posts its answer as a new message (issue 11)', async () => {
    const loop = await createLoop();
    const errors: string[] = [];
    loop.bot.onError((error) => {
      errors.push((error as Error).message);
    });
    let runs = 0;
    loop.bot.on('message.received', async (ctx) => {
      runs += 1;
      await ctx.reply(model(['Hello ', 'there, ', 'friend.'], runs === 1 ? 2 : undefined));
    });

    const { statuses, first, retry } = await postAndRetry(loop, 'hi');

    expect(statuses).toEqual([
      [1, 500],
      [2, 200],
    ]);
    expect(errors).toEqual(['the model stream broke']);
    const replies = await loop.agentMessages();
    expect(replies.map((message) => [message.status, message.parts?.[0]?.text])).toEqual([
      ['sent', 'Hello there, … [interrupted]'],
      ['sent', 'Hello there, friend.'],
    ]);
    // The retry writes under the next attempt's key, so the service makes a new message.
    const starts = [...first.filter(isStart), ...retry.filter(isStart)];
    expect(starts).toHaveLength(2);
    expect(starts[1]!.headers['idempotency-key']).not.toBe(starts[0]!.headers['idempotency-key']);
  });

  it('answers 200 when the first run threw after its reply and the retry generates different text', async () => {
    const loop = await createLoop();
    loop.bot.onError(() => {});
    let runs = 0;
    let replyOfRetry: unknown;
    loop.bot.on('message.received', async (ctx) => {
      runs += 1;
      const answer = runs === 1 ? ['First ', 'answer.'] : ['A ', 'different ', 'second answer.'];
      const result = await ctx.reply(model(answer));
      if (runs === 1) throw new Error('crash after replying');
      // Kept for an assertion outside the handler, where a failure fails the test.
      replyOfRetry = result;
    });

    const { statuses, retry } = await postAndRetry(loop, 'hi');

    expect(statuses).toEqual([
      [1, 500],
      [2, 200],
    ]);
    const replies = await loop.agentMessages();
    expect(replies.map((message) => [message.status, message.parts?.[0]?.text])).toEqual([
      ['sent', 'First answer.'],
    ]);
    expect(replyOfRetry).toEqual({
      message_id: replies[0]!.id,
      status: 'sent',
      revision: replies[0]!.revision,
      text: 'First answer.',
      outcome: 'replayed',
    });
    expect(retry.filter(writesText)).toEqual([]);
  });
});

describe('a reply cut short on one process, retried on another sharing the store', () => {
  it('writes the answer as a new message: the attempt counter is in the bot store, not in the process', async () => {
    const { createMemoryStore } = await import('agent-messaging');
    const store = createMemoryStore();
    const first = await createLoop({ store });
    first.bot.onError(() => {});
    first.bot.on('message.received', (ctx) => ctx.reply(model(['The capital ', 'of Australia.'], 1)));
    // A second process: a fresh copy of the SDK's modules, so nothing kept in module memory is shared.
    vi.resetModules();
    const other = await import('agent-messaging');
    const second = other.createBot({
      apiKey: first.apiKey,
      webhookSecret: first.secret,
      ...first.connection,
      store,
    });
    let outcome: string | undefined;
    second.on('message.received', async (ctx) => {
      outcome = (await ctx.reply(model(['The capital ', 'is Canberra.']))).outcome;
    });
    await first.post('capital?');
    first.route((request) => second.fetch(request));
    await first.mock.clock.advance(5);
    await first.mock.idle();
    expect(first.mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status)).toEqual([
      500, 200,
    ]);
    expect(outcome).toBe('complete');
    expect((await first.agentMessages()).map((m) => [m.status, m.parts?.[0]?.text])).toEqual([
      ['sent', 'The capital … [interrupted]'],
      ['sent', 'The capital is Canberra.'],
    ]);
  });
});
