// A run past ackTimeoutMs on the Redis store with two instances: its delivery is answered 409 (not a
// 2xx) by the instance that runs it, and the service's retry, routed to the other instance, waits
// for it through the dedupe record: 200 duplicate once it succeeded, run again once it failed or its
// instance died. Real signed deliveries through the mock and its retry clock; the waits that matter
// are made certain by gates (a run ends only once the retry met it in flight), never by time.

import { type Bot, type BotOptions, type BotStore, createBot, type MessageContext } from 'agent-messaging';
import { createRedisStore } from 'agent-messaging/redis';
import { describe, expect, it } from 'vitest';
import { gate } from '../webhooks/harness.js';
import { routedWorld } from './bot-world.js';
import { cuttableProxy } from './cuttable-proxy.js';
import { connectClient, redisForFile, uniquePrefix } from './redis-server.js';

const file = redisForFile();
const { cleanups } = file;

/** How a test's instance differs: its Redis URL (a cuttable proxy), options, a wrapper of its store. */
interface InstanceSetup {
  url?: string;
  options?: Partial<BotOptions>;
  wrap?: (store: BotStore) => BotStore;
}

/** b waits for a's runs longer than a's 1 s: the retries' waits end with the run, not with time. */
const PATIENT = { options: { ackTimeoutMs: 5000 } };

/**
 * Two instances on one Redis prefix: each message's first delivery goes to the instance `first`
 * names (a by default), every retry to the other one, as a balancer may send them.
 */
async function twoInstances(first: (text: string) => 'a' | 'b' = () => 'a') {
  const prefix = uniquePrefix('ack');
  const texts = new Map<string, string>(); // event id -> text
  const bots = {} as Record<'a' | 'b', Bot>;
  const w = await routedWorld(async (request) => {
    const event = (await request.clone().json()) as {
      eventId: string;
      message?: { parts?: { text?: string }[] };
    };
    const text = event.message?.parts?.[0]?.text ?? '';
    texts.set(event.eventId, text);
    const retry = w.mock.deliveries.some((d) => d.event_id === event.eventId);
    const at = first(text);
    return bots[retry ? (at === 'a' ? 'b' : 'a') : at].fetch(request);
  });
  /** Opens once a claim was refused on b (a retry met the run in flight); `claimedOnB`, won. */
  const refusedOnB = gate();
  const claimedOnB = gate();
  /** Each instance on its own connection (another process, as far as Redis can tell). */
  const instance = async (
    name: 'a' | 'b',
    { url = file.server.url, options = {}, wrap = (store) => store }: InstanceSetup = {},
  ) => {
    const client = await connectClient(url);
    // Far above a loaded machine's stalls: a command timeout here would be the machine's, not Redis's.
    const redisStore = createRedisStore({ client, prefix, timeoutMs: 5_000 });
    cleanups.push(async () => {
      await redisStore.close();
      client.destroy();
    });
    const store: BotStore =
      name === 'a'
        ? redisStore
        : {
            ...redisStore,
            admit: async (request) => {
              const admitted = await redisStore.admit(request);
              (admitted.claimed ? claimedOnB : refusedOnB).open();
              return admitted;
            },
          };
    bots[name] = createBot({
      apiKey: w.seed.apiKey,
      webhookSecret: w.seed.webhookSecret,
      ...w.connection,
      store: wrap(store),
      lockTtlMs: 900,
      // A retry's run (a reply) ends within it on a loaded machine; a held run is answered 409 after it.
      ackTimeoutMs: 1000,
      ...options,
    });
    bots[name].onError(() => undefined); // the failures here are the point; the tests read the wire
    return bots[name];
  };
  const say = (text: string) =>
    w.mock.postUserMessage(w.seed.conversationId, { user_id: w.seed.user.id, text });
  /** The answers to a text's deliveries, in order. */
  const attempts = (text: string) =>
    w.mock.deliveries.filter((d) => texts.get(d.event_id) === text).map((d) => d.status);
  /** Runs the service's retries due after `seconds`, and waits for their answers and both instances. */
  const retries = async (seconds = 5) => {
    await w.mock.clock.advance(seconds);
    await w.mock.idle();
    await Promise.all([bots.a.idle(), bots.b.idle()]);
  };
  const dedupeKey = (text: string) =>
    `${prefix}k:dedupe:${[...texts].find(([, value]) => value === text)?.[0]}`;
  return { ...w, prefix, instance, refusedOnB, claimedOnB, say, attempts, retries, dedupeKey };
}

type Instances = Awaited<ReturnType<typeof twoInstances>>;

/**
 * m1 first reaches a, whose run throws once b's retry met it in flight; b runs that retry and
 * replies. Answers who ran what, once the retries were answered.
 */
async function failsWhileRetryWaits(w: Instances, a: InstanceSetup = {}) {
  const ran: string[] = [];
  (await w.instance('a', a)).on('message.received', async (ctx) => {
    ran.push(`a:${ctx.text}`);
    await w.refusedOnB.opened;
    throw new Error('the model timed out');
  });
  (await w.instance('b', PATIENT)).on('message.received', async (ctx) => {
    ran.push(`b:${ctx.text}`);
    await ctx.reply(`re ${ctx.text}`);
  });
  w.say('m1');
  await w.mock.idle();
  await w.retries();
  return ran;
}

describe('a run past ackTimeoutMs, two instances on the Redis store', () => {
  it('answered 409 by a; the retry on b waits through the dedupe record and answers 200 duplicate; run once', async () => {
    const w = await twoInstances();
    const ran: string[] = [];
    const a = await w.instance('a');
    await w.instance('b', PATIENT);
    a.on('message.received', async (ctx) => {
      await w.refusedOnB.opened; // ends only once b's retry met the claim in flight
      ran.push(`a:${ctx.text}`);
      await ctx.reply(`re ${ctx.text}`);
    });
    w.say('m1');
    await w.mock.idle();
    expect(w.attempts('m1')).toEqual([409]);
    await w.retries();
    expect(w.attempts('m1')).toEqual([409, 200]);
    expect(ran).toEqual(['a:m1']);
    expect(await w.replies()).toEqual(['re m1']);
    expect(await file.raw.get(w.dedupeKey('m1'))).toBe('done');
  });

  it('a run on a that throws while the retry on b waits: b runs it, one reply', async () => {
    const w = await twoInstances();
    expect(await failsWhileRetryWaits(w)).toEqual(['a:m1', 'b:m1']);
    expect(w.attempts('m1')).toEqual([409, 200]);
    expect(await w.replies()).toEqual(['re m1']);
  });

  it('a message waiting on b behind a run on a, past ackTimeoutMs, that then fails: its retry runs it', async () => {
    const w = await twoInstances((text) => (text === 'm1' ? 'a' : 'b'));
    const ran: string[] = [];
    const started = gate();
    const release = gate();
    let failed = false;
    const handler = (name: string) => async (ctx: MessageContext) => {
      ran.push(`${name}:${ctx.text}`);
      if (ctx.text === 'm1') {
        started.open();
        await release.opened;
      }
      if (ctx.text === 'm2' && !failed) {
        failed = true;
        throw new Error('m2 failed on its turn');
      }
      await ctx.reply(`re ${ctx.text}`);
    };
    (await w.instance('a')).on('message.received', handler('a'));
    (await w.instance('b')).on('message.received', handler('b'));
    w.say('m1');
    await started.opened;
    w.say('m2'); // queued by b behind a's lock: a's holder runs it after m1
    await w.mock.idle();
    expect([...w.attempts('m1'), ...w.attempts('m2')]).toEqual([409, 409]);
    release.open();
    await w.retries(0); // nothing due yet: only waits for both instances' runs
    expect(ran).toEqual(['a:m1', 'a:m2']);
    await w.retries();
    expect(w.attempts('m1')).toEqual([409, 200]); // done: a duplicate
    expect(w.attempts('m2')).toEqual([409, 200]); // released: run again, on a (its retry's instance)
    expect(ran).toEqual(['a:m1', 'a:m2', 'a:m2']);
    expect(await w.replies()).toEqual(['re m1', 're m2']);
  });

  it('a dies after its 409: its claim expires within lockTtlMs and a later retry on b runs the message', async () => {
    const w = await twoInstances();
    const proxy = await cuttableProxy(new URL(file.server.url));
    cleanups.push(() => proxy.cut());
    const a = await w.instance('a', { url: proxy.url() });
    const b = await w.instance('b');
    const ran: string[] = [];
    a.on('message.received', async (ctx) => {
      ran.push(`a:${ctx.text}`);
      await expect.poll(() => w.attempts('m1'), { interval: 5 }).toEqual([409]); // answered
      await proxy.cut(); // killed: no renewal, no release, no mark, and never returns
      await new Promise(() => {});
    });
    b.on('message.received', async (ctx) => {
      ran.push(`b:${ctx.text}`);
      await ctx.reply(`re ${ctx.text}`);
    });
    w.say('m1');
    await w.mock.idle();
    expect(w.attempts('m1')).toEqual([409]);
    // Redis drops a's claim (and its lock) once nobody renews them.
    await expect.poll(() => file.raw.exists(w.dedupeKey('m1')), { interval: 20 }).toBe(0);
    await expect
      .poll(() => file.raw.exists(`${w.prefix}lock:conversation:${w.seed.conversationId}`), { interval: 20 })
      .toBe(0);
    await w.mock.clock.advance(5);
    await w.mock.idle();
    await b.idle();
    expect(w.attempts('m1')).toEqual([409, 200]);
    expect(ran).toEqual(['a:m1', 'b:m1']);
    expect(await w.replies()).toEqual(['re m1']);
  });

  it("a retry that takes the claim a failed run freed before that run's settle removed the message: runs it", async () => {
    const w = await twoInstances();
    let refused = false;
    void w.refusedOnB.opened.then(() => {
      refused = true;
    });
    // a's settle after its failed run waits until b's retry took the freed claim (and queued m1
    // again, which that settle then removes): the race a retry polling the claim can meet.
    const wrap = (store: BotStore): BotStore => ({
      ...store,
      settle: async (request) => {
        if (refused) await w.claimedOnB.opened;
        return store.settle(request);
      },
    });
    expect(await failsWhileRetryWaits(w, { wrap })).toEqual(['a:m1', 'b:m1']);
    expect(w.attempts('m1')).toEqual([409, 200]);
    expect(await w.replies()).toEqual(['re m1']);
  });
});
