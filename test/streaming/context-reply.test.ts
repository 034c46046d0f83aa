// ctx.reply (src/webhooks/context-reply.ts): issue 11's outcomes for a bot. A model that fails
// before its first token leaves nothing and fails the delivery, whose retry answers normally; one
// that fails halfway leaves its reply marked and the retry answers in a new message, with the
// attempt counter in the bot's store; typing shows until the first chunk and stops with the reply.
import { createBot, createMemoryStore } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { createLoop, gate, type Loop } from '../webhooks/harness.js';

async function* model(words: readonly string[], failAt?: number) {
  for (const [index, word] of words.entries()) {
    if (index === failAt) throw new Error('the model failed');
    yield word;
  }
}

/** The user posts, the first delivery settles, then the clock fires the 5 s retry. */
async function postAndRetry(loop: Loop, text: string) {
  await loop.post(text);
  await loop.mock.clock.advance(5);
  await loop.mock.idle();
  return loop.mock.deliveries
    .filter((delivery) => delivery.type === 'message.received')
    .map((delivery) => [delivery.attempt, delivery.status]);
}

const isStart = (entry: { method: string; query: Record<string, string> }) =>
  entry.method === 'POST' && entry.query.stream === 'true';

describe('ctx.reply with a model that fails', () => {
  it.each([
    [
      'throws before its first token',
      (run: number) => model(['Hello ', 'there.'], run === 1 ? 0 : undefined),
    ],
    [
      'ends empty on the first run (the AI SDK on a 401)',
      (run: number) => model(run === 1 ? [] : ['Hello ', 'there.']),
    ],
  ])('that %s: no message, the delivery fails, and the retry answers normally', async (_, source) => {
    const loop = await createLoop();
    const errors: unknown[] = [];
    loop.bot.onError((error) => {
      errors.push(error);
    });
    let runs = 0;
    loop.bot.on('message.received', async (ctx) => {
      runs += 1;
      await ctx.reply(source(runs));
    });
    expect(await postAndRetry(loop, 'hi')).toEqual([
      [1, 500],
      [2, 200],
    ]);
    expect(errors).toHaveLength(1);
    const replies = await loop.agentMessages();
    expect(replies.map((message) => [message.status, message.parts?.[0]?.text])).toEqual([
      ['sent', 'Hello there.'],
    ]);
    expect(loop.requests().filter(isStart)).toHaveLength(1);
  });

  it('halfway, on one instance, is retried on another sharing the store: the cut reply is marked and the answer is a new message', async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store });
    loop.bot.onError(() => {});
    loop.bot.on('message.received', (ctx) =>
      ctx.reply(model(['The capital ', 'of Australia ', 'is Canberra.'], 2)).then(() => {}),
    );
    const other = createBot({ apiKey: loop.apiKey, webhookSecret: loop.secret, ...loop.connection, store });
    other.on('message.received', async (ctx) => {
      const result = await ctx.reply(model(['The capital ', 'of Australia ', 'is Canberra.']));
      expect(result.outcome).toBe('complete');
    });
    await loop.post('What is the capital of Australia?');
    loop.route((request) => other.fetch(request));
    await loop.mock.clock.advance(5);
    await loop.mock.idle();
    const replies = await loop.agentMessages();
    expect(replies.map((message) => [message.status, message.parts?.[0]?.text])).toEqual([
      ['sent', 'The capital of Australia  … [interrupted]'],
      ['sent', 'The capital of Australia is Canberra.'],
    ]);
  });
});

describe('ctx.reply and typing', () => {
  it('shows typing until the first chunk and stops renewing it when the reply ends', async () => {
    const loop = await createLoop({ typingRenewMs: 10 });
    const firstToken = gate();
    loop.bot.on('message.received', async (ctx) => {
      async function* slowModel() {
        await firstToken.opened;
        yield 'Here ';
        yield 'you are.';
      }
      await ctx.reply(slowModel());
    });
    const typing = () => loop.requests({ path: /\/typing$/ }).map((entry) => JSON.parse(entry.body!).state);
    const posted = loop.post('hi');
    // Renewed while the model thinks.
    await expect.poll(() => typing().filter((state) => state === 'start').length).toBeGreaterThan(2);
    firstToken.open();
    await posted;
    await loop.bot.idle();
    const states = typing();
    expect(states.at(-1)).toBe('stop');
    // No renewal once the message started streaming: every start came before it.
    const log = loop.requests();
    const lastStart = log.findLastIndex(
      (entry) => entry.path.endsWith('/typing') && JSON.parse(entry.body!).state === 'start',
    );
    expect(lastStart).toBeLessThan(log.findIndex(isStart));
    // No renewal after the reply ended: three renewal periods later, nothing more was sent.
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(typing()).toEqual(states);
  });
});

describe('ctx.reply when ctx.signal fires', () => {
  it('ends a streaming reply marked, outcome interrupted', async () => {
    const loop = await createLoop({ maxHandlerMs: 150 });
    loop.bot.onError(() => {});
    let outcome: unknown;
    loop.bot.on('message.received', async (ctx) => {
      async function* hangs() {
        yield 'Let me think';
        await new Promise(() => {}); // the model never answers again; the run's deadline fires
      }
      outcome = (await ctx.reply(hangs())).outcome;
    });
    await loop.post('hi');
    await loop.bot.idle();
    expect(outcome).toBe('interrupted');
    const replies = await loop.agentMessages();
    expect(replies.map((message) => [message.status, message.parts?.[0]?.text])).toEqual([
      ['sent', 'Let me think … [interrupted]'],
    ]);
  });
});
