// ctx.reply (src/webhooks/context-reply.ts): issue 11's outcomes for a bot. A model that fails
// before its first token leaves nothing and fails the delivery, whose retry answers normally; one
// that fails halfway leaves its reply marked and the retry answers in a new message, with the
// attempt counter in the bot's store; typing shows until the first chunk and stops with the reply.
import { type BotStore, ConflictError, createBot, createMemoryStore, ValidationError } from 'agent-messaging';
import { describe, expect, it, vi } from 'vitest';
import { createLoop, gate, type Loop, withFakeTimers } from '../webhooks/harness.js';

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
      ['sent', 'The capital of Australia … [interrupted]'],
      ['sent', 'The capital of Australia is Canberra.'],
    ]);
  });
});

describe('ctx.reply and typing', () => {
  it('shows typing until the first chunk and stops renewing it when the reply ends', async () => {
    // Fake timers run the renewals (every 8 s) at once. The delivery is answered at once, so the
    // mock's 10 s delivery timeout does not end it while the model thinks.
    await withFakeTimers(async () => {
      const loop = await createLoop({ ack: 'immediately' });
      const failures: unknown[] = [];
      loop.bot.onError((error) => failures.push(error));
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
      await loop.post('hi');
      await vi.waitFor(() => expect(typing()).toEqual(['start']));
      // Renewed while the model thinks.
      await vi.advanceTimersByTimeAsync(2 * 8000);
      expect(typing()).toEqual(['start', 'start', 'start']);
      firstToken.open();
      await loop.bot.idle();
      expect(failures).toEqual([]);
      const states = typing();
      expect(states.at(-1)).toBe('stop');
      // No renewal once the message started streaming: every start came before it.
      const log = loop.requests();
      const lastStart = log.findLastIndex(
        (entry) => entry.path.endsWith('/typing') && JSON.parse(entry.body!).state === 'start',
      );
      expect(lastStart).toBeLessThan(log.findIndex(isStart));
      // No renewal after the reply ended: three renewal periods later, nothing more was sent.
      await vi.advanceTimersByTimeAsync(3 * 8000);
      expect(typing()).toEqual(states);
    });
  });
});

describe('ctx.reply when ctx.signal fires', () => {
  it('ends a streaming reply marked, outcome interrupted', async () => {
    // Long enough that 'Let me think' is written before the deadline, however busy the machine.
    const loop = await createLoop({ maxHandlerMs: 1000 });
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

describe('ctx.reply and its first token (issue 17)', () => {
  const words = Array.from({ length: 300 }, (_, i) => `word${i} `);
  const written = words.join('');
  async function* fastModel() {
    yield* words;
  }

  it.each([
    ['stream', false],
    ['append (the streamed start refused)', true],
  ])('on %s sends the first token alone before the rest, and coalesces the rest', async (_, refused) => {
    const loop = await createLoop();
    if (refused) {
      loop.mock.faults.inject({
        method: 'POST',
        path: '/v1/conversations/*/messages',
        fault: 'refuse_streamed_body',
      });
    }
    let result: { text: string; outcome: string } | undefined;
    loop.bot.on('message.received', async (ctx) => {
      result = await ctx.reply(fastModel());
    });
    const before = loop.requests().length;
    await loop.post('hi');
    await loop.bot.idle();
    expect(result).toMatchObject({ text: written, outcome: 'complete' });
    const log = loop.requests().slice(before);
    const replyRequests = log.filter((entry) => entry.method === 'POST' && !entry.path.endsWith('/typing'));
    const starts = replyRequests.filter(isStart);
    if (refused) {
      // The first append is the first token alone: the rest was written back to back behind it.
      const appends = replyRequests.filter((entry) => entry.path.endsWith('/append'));
      expect(JSON.parse(appends[0]!.body!).value).toBe(words[0]);
      const afterStart = replyRequests.length - starts.length;
      expect(afterStart).toBeLessThanOrEqual(Math.ceil(written.length / 256) + 2);
    } else {
      expect(replyRequests).toHaveLength(1);
      const patches = starts[0]!
        .body!.split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
        .filter((line) => line.type === 'message.patch');
      expect(patches[0].patch.value).toBe(words[0]);
      expect(patches.length).toBeLessThanOrEqual(Math.ceil(written.length / 256) + 1);
    }
    expect((await loop.agentMessages()).map((message) => message.parts?.[0]?.text)).toEqual([written]);
  });
});

describe('ctx.reply and typing, at the first token', () => {
  it('sends the typing stop after the reply started, not ahead of its start and first token', async () => {
    // The order in which the bot's client calls fetch (the in-process mock may log it otherwise).
    const calls: string[] = [];
    const loop = await createLoop();
    const bot = createBot({
      apiKey: loop.apiKey,
      webhookSecret: loop.secret,
      baseUrl: loop.connection.baseUrl,
      fetch: (input: string | URL | Request, init?: RequestInit) => {
        const url = new URL(input instanceof Request ? input.url : String(input));
        calls.push(`${url.pathname.split('/').at(-1)}${url.searchParams.has('stream') ? '?stream' : ''}`);
        return loop.connection.fetch(input, init);
      },
    });
    loop.route((request) => bot.fetch(request));
    bot.on('message.received', async (ctx) => {
      await ctx.reply(model(['Hello ', 'there.']));
    });
    await loop.post('hi');
    await bot.idle();
    const replyCalls = calls.filter((call) => call === 'typing' || call === 'messages?stream');
    // The typing start before the first chunk, then the streamed start, then the typing stop.
    expect(replyCalls).toEqual(['typing', 'messages?stream', 'typing']);
    const states = loop.requests({ path: /\/typing$/ }).map((entry) => JSON.parse(entry.body!).state);
    expect(states).toEqual(['start', 'stop']);
  });
});

describe('ctx.reply and the reply lease options', () => {
  /** A memory store that records the reply leases asked of it; `heldByAnother` takes the first one first. */
  function leaseRecordingStore(heldByAnother: boolean) {
    const store = createMemoryStore();
    const leases: { key: string; ttlMs: number }[] = [];
    let taken = false;
    const recording: BotStore = Object.create(store);
    recording.acquireLock = async (key, ttlMs) => {
      if (key.startsWith('reply-lease:')) {
        leases.push({ key, ttlMs });
        if (heldByAnother && !taken) {
          taken = true;
          // Another instance writes this reply and does not finish.
          await store.acquireLock(key, 600_000);
        }
      }
      return store.acquireLock(key, ttlMs);
    };
    return { store: recording, leases };
  }

  it('takes the lease for writerLeaseMs', async () => {
    const { store, leases } = leaseRecordingStore(false);
    const loop = await createLoop({ store });
    loop.bot.on('message.received', async (ctx) => {
      await ctx.reply(model(['Hello ', 'there.']), { writerLeaseMs: 45_000 });
    });
    await loop.post('hi');
    await loop.bot.idle();
    expect(leases.map((lease) => lease.ttlMs)).toEqual([45_000]);
    expect((await loop.agentMessages()).map((message) => message.parts?.[0]?.text)).toEqual(['Hello there.']);
  });

  it('with writerWaitMs 0 fails at once, sending nothing, when another writer holds the key', async () => {
    const { store, leases } = leaseRecordingStore(true);
    const loop = await createLoop({ store });
    loop.bot.onError(() => {});
    let failure: unknown;
    loop.bot.on('message.received', async (ctx) => {
      failure = await ctx.reply(model(['Hello ', 'there.']), { writerWaitMs: 0 }).catch((error) => error);
    });
    await loop.post('hi');
    await loop.bot.idle();
    expect(ConflictError.is(failure) && failure.code === 'reply_in_progress').toBe(true);
    // One try, no waiting: the default would have polled the key for ten seconds.
    expect(leases).toHaveLength(1);
    expect(loop.requests().filter(isStart)).toHaveLength(0);
    expect(await loop.agentMessages()).toEqual([]);
  });

  it.each([
    [{ writerLeaseMs: 0 }, 'writerLeaseMs'],
    [{ writerWaitMs: -1 }, 'writerWaitMs'],
    [{ writerWaitMs: 1.5 }, 'writerWaitMs'],
  ])('rejects %o with a ValidationError naming %s, before anything is sent', async (options, field) => {
    const loop = await createLoop();
    let failure: unknown;
    loop.bot.on('message.received', async (ctx) => {
      failure = await ctx.reply(model(['Hello']), options).catch((error) => error);
    });
    const before = loop.requests().length;
    await loop.post('hi');
    await loop.bot.idle();
    expect(failure).toBeInstanceOf(ValidationError);
    expect((failure as ValidationError).issues.map((issue) => issue.field)).toEqual([field]);
    // Not even the typing indicator: the options are checked first.
    expect(
      loop
        .requests()
        .slice(before)
        .filter((entry) => entry.method === 'POST'),
    ).toEqual([]);
  });
});
