// Instances that die under a conversation, on the Redis store, through the mock with real signed
// deliveries. A "killed" instance is frozen the way SIGKILL leaves it for everyone else: its handler
// never returns, its Redis connection is cut (no renewal, no release, no mark), and the service sees
// its delivery fail (502, as a load balancer answers for a dead upstream). Short TTLs come from the
// options; the tests wait for the store's own expiry (polling Redis), never assert on time.

import { type Bot, type BotOptions, createBot } from 'agent-messaging';
import { createRedisStore, type RedisStore } from 'agent-messaging/redis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { routedWorld } from './bot-world.js';
import { cuttableProxy } from './cuttable-proxy.js';
import { connectClient, startRedis, type TestRedis, uniquePrefix } from './redis-server.js';

let redis: TestRedis;
let raw: Awaited<ReturnType<typeof connectClient>>;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  redis = await startRedis();
  raw = await connectClient(redis.url);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});
afterAll(async () => {
  raw?.destroy();
  await redis?.stop();
});

// Long enough that a renewal (every third of it) is never starved past it on a loaded machine (a 1 s
// stall is survived; 300 ms failed once in the full suite at load 10), short enough that a dead
// holder's lock expires quickly.
const LOCK_TTL_MS = 1500;

/** A mock seeded with an agent, a user and their conversation; webhooks go to `route`. */
async function world(route: (request: Request) => Promise<Response>) {
  const { mock, seed, connection, replies } = await routedWorld(route);
  const say = (text: string) => mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text });
  const attempts = (text: string) => {
    const id = eventIdOf(text);
    return mock.deliveries.filter((d) => d.event_id === id).map((d) => d.status);
  };
  const ids = new Map<string, string>();
  const eventIdOf = (text: string) => ids.get(text) ?? '';
  /** Deliveries of each text routed so far, this one included (the mock logs an attempt once answered). */
  const routed = new Map<string, number>();
  return { mock, seed, connection, replies, say, attempts, eventIdOf, ids, routed };
}

type World = Awaited<ReturnType<typeof world>>;

/** A bot on its own connection to the shared Redis (another process, as far as Redis can tell). */
async function instance(w: World, prefix: string, options: Partial<BotOptions> = {}, url = redis.url) {
  const client = await connectClient(url);
  // A command timeout far above a stalled event loop's pause: a timeout here would be the machine's, not
  // Redis's (a killed instance's commands never reach Redis; nothing waits for them).
  const store: RedisStore = createRedisStore({ client, prefix, timeoutMs: 5_000 });
  cleanups.push(async () => {
    await store.close();
    client.destroy();
  });
  const bot: Bot = createBot({
    apiKey: w.seed.apiKey,
    webhookSecret: w.seed.webhookSecret,
    ...w.connection,
    store,
    lockTtlMs: LOCK_TTL_MS,
    ...options,
  });
  bot.onError(() => undefined); // the failures here are the point; the tests read the wire instead
  return bot;
}

/**
 * An instance that dies while it runs its first message: once its handler started, its Redis
 * connection is cut and the handler never returns; the service sees that delivery answered 502.
 */
async function doomed(w: World, prefix: string) {
  const proxy = await cuttableProxy(new URL(redis.url));
  cleanups.push(() => proxy.cut());
  const bot = await instance(w, prefix, {}, proxy.url());
  let died!: () => void;
  const dead = new Promise<void>((resolve) => {
    died = resolve;
  });
  const ran: string[] = [];
  bot.on('message.received', async (ctx) => {
    ran.push(ctx.text);
    await proxy.cut();
    died();
    await new Promise(() => {}); // frozen for good, whatever its signal says
  });
  const deliver = async (request: Request) => {
    void bot.fetch(request).catch(() => undefined);
    await dead;
    return new Response(null, { status: 502 });
  };
  return { ran, dead, deliver };
}

/** A live instance that answers each message with `re {text}` and records what it ran. */
async function survivor(w: World, prefix: string, options: Partial<BotOptions> = {}) {
  const bot = await instance(w, prefix, options);
  const ran: string[] = [];
  bot.on('message.received', async (ctx) => {
    ran.push(ctx.text);
    await ctx.reply(`re ${ctx.text}`);
  });
  return { bot, ran };
}

/** Waits until Redis itself dropped the dead instance's lock and claim (their TTLs, not renewed). */
async function expired(w: World, prefix: string, text: string) {
  await expect
    .poll(() => raw.exists(`${prefix}lock:conversation:${w.seed.conversationId}`), { interval: 20 })
    .toBe(0);
  await expect.poll(() => raw.exists(`${prefix}k:dedupe:${w.eventIdOf(text)}`), { interval: 20 }).toBe(0);
}

/** Records each message's event id as the mock delivers it, and counts its deliveries. */
async function noteEvent(w: World, request: Request) {
  const event = (await request.clone().json()) as {
    eventId: string;
    message?: { parts?: { text?: string }[] };
  };
  const text = event.message?.parts?.[0]?.text ?? '';
  if (!w.ids.has(text)) w.ids.set(text, event.eventId);
  w.routed.set(text, (w.routed.get(text) ?? 0) + 1);
  return text;
}

describe('an instance killed under its conversation (Redis store)', () => {
  it("a holder killed mid-handler: the service's first retry, on another instance, answers it once", async () => {
    const prefix = uniquePrefix('killed');
    let route: (request: Request) => Promise<Response> = async () => new Response(null, { status: 503 });
    const w = await world(async (request) => {
      await noteEvent(w, request);
      return route(request);
    });
    const a = await doomed(w, prefix);
    const b = await survivor(w, prefix);
    route = (request) => (w.routed.get('m1') === 1 ? a.deliver(request) : b.bot.fetch(request));

    w.say('m1');
    await w.mock.idle();
    expect(a.ran).toEqual(['m1']);
    expect(w.attempts('m1')).toEqual([502]);
    // Nothing renews the dead holder's claim or lock: each is gone one lock TTL later, not after
    // maxHandlerMs + 5 min, so the retry 5 s later (not the 30-minute one) finds the message free.
    await expired(w, prefix, 'm1');
    await w.mock.clock.advance(5);
    await w.mock.idle();
    await b.bot.idle();

    expect(w.attempts('m1')).toEqual([502, 200]);
    expect(b.ran).toEqual(['m1']);
    expect(await w.replies()).toEqual(['re m1']);
    expect(await raw.get(`${prefix}k:dedupe:${w.eventIdOf('m1')}`)).toBe('done');
    expect(await raw.exists(`${prefix}q:queue:${w.seed.conversationId}`)).toBe(0);
  });

  it("a delivery waiting for a holder that dies runs the dead holder's message first, then its own", async () => {
    const prefix = uniquePrefix('waiter');
    const w = await world(async (request) => {
      const text = await noteEvent(w, request);
      return text === 'm1' && w.routed.get('m1') === 1 ? a.deliver(request) : b.bot.fetch(request);
    });
    const a = await doomed(w, prefix);
    const b = await survivor(w, prefix);

    w.say('m1');
    await a.dead; // a holds the conversation and runs m1, then dies
    w.say('m2'); // b queues m2 behind m1 and waits for the lock a will never release
    await w.mock.idle();
    await b.bot.idle();

    // b took the lock once a's expired, found m1 still queued (a never settled it) and ran it first.
    expect(b.ran).toEqual(['m1', 'm2']);
    expect(await w.replies()).toEqual(['re m1', 're m2']);
    expect(w.attempts('m1')).toEqual([502]);
    expect(w.attempts('m2')).toEqual([200]);
    // The service's retry of m1 is a duplicate now: answered 200 without a second run.
    await w.mock.clock.advance(5);
    await w.mock.idle();
    expect(w.attempts('m1')).toEqual([502, 200]);
    expect(b.ran).toEqual(['m1', 'm2']);
    expect(await w.replies()).toEqual(['re m1', 're m2']);
  });

  it.each(['queue', 'concurrent'] as const)(
    'a claim outlives its short TTL while its handler runs (renewed): a retry meanwhile is 409, no second run (%s)',
    async (concurrency) => {
      const prefix = uniquePrefix(`renew-${concurrency}`);
      let route: (request: Request) => Promise<Response> = async () => new Response(null, { status: 503 });
      const w = await world(async (request) => {
        await noteEvent(w, request);
        return route(request);
      });
      const dedupeKey = () => `${prefix}k:dedupe:${w.eventIdOf('long')}`;
      const a = await instance(w, prefix, { concurrency });
      const b = await survivor(w, prefix, { concurrency });
      let finish!: () => void;
      const finished = new Promise<void>((resolve) => {
        finish = resolve;
      });
      let started!: () => void;
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const ran: string[] = [];
      a.on('message.received', async (ctx) => {
        ran.push(ctx.text);
        started();
        await finished;
        await ctx.reply(`re ${ctx.text}`);
      });
      // The first attempt's answer is lost (502) while a keeps running the handler.
      route = async (request) => {
        if (w.routed.get('long') !== 1) return b.bot.fetch(request);
        void a.fetch(request);
        await running;
        return new Response(null, { status: 502 });
      };

      w.say('long');
      await w.mock.idle();
      // More than a TTL passes while the handler runs: seen as the claim's TTL going back up four times.
      let renewals = 0;
      let last = await raw.pTTL(dedupeKey());
      await expect
        .poll(
          async () => {
            const ttl = await raw.pTTL(dedupeKey());
            if (ttl > last) renewals++;
            last = ttl;
            return renewals;
          },
          { interval: 10, timeout: 10_000 },
        )
        .toBeGreaterThanOrEqual(4);
      expect(await raw.get(dedupeKey())).toBe('in_flight');
      expect(await raw.pTTL(dedupeKey())).toBeLessThanOrEqual(LOCK_TTL_MS);

      await w.mock.clock.advance(5); // the retry reaches b while a still runs: in flight, not run
      await w.mock.idle();
      expect(w.attempts('long')).toEqual([502, 409]);
      finish();
      await a.idle();
      await w.mock.clock.advance(300); // the next retry: a duplicate
      await w.mock.idle();
      await b.bot.idle();

      expect(w.attempts('long')).toEqual([502, 409, 200]);
      expect(ran).toEqual(['long']);
      expect(b.ran).toEqual([]);
      expect(await w.replies()).toEqual(['re long']);
      expect(await raw.get(dedupeKey())).toBe('done');
    },
  );
});

describe('a holder that loses its lock or fails, on the Redis store (review of the lanes)', () => {
  it('a lock taken from under a running handler: ctx.signal fires, its reply ends marked, the next holder answers anew', async () => {
    const prefix = uniquePrefix('lock-lost');
    const w = await world(async (request) => {
      const text = await noteEvent(w, request);
      return (text === 'm1' && w.routed.get('m1') === 1 ? a : b).fetch(request);
    });
    const a = await instance(w, prefix);
    const b = await instance(w, prefix);
    const ran: string[] = [];
    const reasons: string[] = [];
    let halfShown!: () => void;
    const shown = new Promise<void>((resolve) => {
      halfShown = resolve;
    });
    a.on('message.received', async (ctx) => {
      ran.push(`a ${ctx.text}`);
      // Streams half an answer, then waits for the answer's rest, which never comes before the loss.
      async function* half() {
        yield `re ${ctx.text} half`;
        halfShown();
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      }
      const result = await ctx.reply(half());
      reasons.push(`${(ctx.signal.reason as Error).name} ${result.outcome}`);
    });
    b.on('message.received', async (ctx) => {
      ran.push(`b ${ctx.text}`);
      await ctx.reply(['re ', ctx.text]);
    });

    w.say('m1');
    await shown;
    await expect.poll(async () => (await w.replies()).join('|')).toBe('re m1 half');
    // The lock's key vanishes (taken over after a stall, say): a's next renewal finds it gone.
    await raw.del(`${prefix}lock:conversation:${w.seed.conversationId}`);
    w.say('m2'); // b wins the free lock, finds m1 still queued (never settled) and runs it first
    await w.mock.idle();
    await a.idle();
    await b.idle();

    expect(reasons).toEqual(['LockLostError interrupted']);
    expect(ran).toEqual(['a m1', 'b m1', 'b m2']);
    // One writer per message: a's cut reply ended marked before b's answer to m1 began.
    expect(await w.replies()).toEqual(['re m1 half … [interrupted]', 're m1', 're m2']);
    expect(w.attempts('m1')).toEqual([500]);
    expect(w.attempts('m2')).toEqual([200]);
    // The service's retry of m1 finds it done: 200 without a third run.
    await w.mock.clock.advance(5);
    await w.mock.idle();
    expect(w.attempts('m1')).toEqual([500, 200]);
    expect(ran).toEqual(['a m1', 'b m1', 'b m2']);
    expect(await raw.exists(`${prefix}q:queue:${w.seed.conversationId}`)).toBe(0);
  });

  it('a handler that throws is answered 500 and not marked done; the retry on another instance runs it once', async () => {
    const prefix = uniquePrefix('threw');
    const w = await world(async (request) => {
      const text = await noteEvent(w, request);
      return (w.routed.get(text) === 1 ? a.bot : b.bot).fetch(request);
    });
    const a = await survivor(w, prefix);
    const b = await survivor(w, prefix);
    let failures = 0;
    a.bot.on('message.received', async () => {
      failures += 1;
      throw new Error('the model is down');
    });

    w.say('m1');
    await w.mock.idle();
    expect(w.attempts('m1')).toEqual([500]);
    expect(failures).toBe(1);
    // Nothing says done: the claim was released and the queue emptied by the settle.
    expect(await raw.exists(`${prefix}k:dedupe:${w.eventIdOf('m1')}`)).toBe(0);
    expect(await raw.exists(`${prefix}q:queue:${w.seed.conversationId}`)).toBe(0);
    await w.mock.clock.advance(5);
    await w.mock.idle();
    await b.bot.idle();
    expect(w.attempts('m1')).toEqual([500, 200]);
    expect(b.ran).toEqual(['m1']);
    expect(await w.replies()).toEqual(['re m1']);
    expect(await raw.get(`${prefix}k:dedupe:${w.eventIdOf('m1')}`)).toBe('done');
  });
});

describe('a backlog longer than the queue’s TTL, on the Redis store (review of the lanes)', () => {
  it('keeps the queue while its holder works through it: a message answered 202 is run, not left to expire', async () => {
    const prefix = uniquePrefix('backlog');
    const w = await world(async (request) => {
      await noteEvent(w, request);
      return bot.fetch(request);
    });
    // The queue outlives a wait for the lock by maxHandlerMs + 2 lock TTLs + debounceMs (9 s here),
    // counted from the last enqueue; two handlers in a row take longer, each within maxHandlerMs. Each
    // spends about half of it (4.5 s), 1.5 s inside maxHandlerMs; the lock is the file's, renewed every
    // 500 ms and lapsing only after a 1 s stall, so a loaded machine neither cuts a run short nor lets
    // the lock lapse under its holder (a 150 ms lock did at load 10, and m1 ran twice).
    const options = { maxHandlerMs: 6000, debounceMs: 1, ack: 'immediately' } as const;
    const bot = await instance(w, prefix, options);
    const queue = `${prefix}q:queue:${w.seed.conversationId}`;
    // A key that expires with the queue as the last enqueue left it (a little after it).
    const marker = `${prefix}marker`;
    const ran: string[] = [];
    let queued!: () => void;
    const allQueued = new Promise<void>((resolve) => {
      queued = resolve;
    });
    bot.on('message.received', async (ctx) => {
      ran.push(ctx.text);
      if (ctx.text === 'm1') {
        await allQueued;
        const left = await raw.pTTL(queue);
        await raw.set(marker, '1', { PX: left + 20 });
        // Half of it spent in m1, the rest in m2.
        await expect.poll(() => raw.pTTL(marker), { interval: 20, timeout: 10_000 }).toBeLessThan(left / 2);
      }
      if (ctx.text === 'm2') {
        await expect.poll(() => raw.exists(marker), { interval: 20, timeout: 10_000 }).toBe(0);
      }
      await ctx.reply(`re ${ctx.text}`);
    });

    w.say('m1');
    await expect.poll(() => ran.length).toBe(1);
    w.say('m2');
    w.say('m3');
    await expect.poll(() => raw.zCard(queue)).toBe(3);
    queued();
    await w.mock.idle();
    await bot.idle();

    expect(w.attempts('m3')).toEqual([202]);
    expect(ran).toEqual(['m1', 'm2', 'm3']);
    expect(await w.replies()).toEqual(['re m1', 're m2', 're m3']);
  });
});
