// Bots on the Redis store, end to end through the mock with real signed deliveries: two instances
// (two connections, as two processes) share dedupe and conversation order, and a Redis that goes
// away answers 503 so the service retries, with nothing marked done that was not.

import { type Bot, createBot } from 'agent-messaging';
import { createRedisStore } from 'agent-messaging/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routedWorld } from './bot-world.js';
import { cuttableProxy } from './cuttable-proxy.js';
import { connectClient, startRedis, type TestRedis, uniquePrefix } from './redis-server.js';

let redis: TestRedis;
let raw: Awaited<ReturnType<typeof connectClient>>;

beforeAll(async () => {
  redis = await startRedis();
  raw = await connectClient(redis.url);
});

afterAll(async () => {
  raw?.destroy();
  await redis?.stop();
});

const world = routedWorld;

describe('bots on the Redis store', () => {
  it('two instances on one Redis: a delivery doubled across them runs once; a burst keeps its order', async () => {
    let bots: Bot[] = [];
    let turn = 0;
    const prefix = uniquePrefix('bots');
    // The service delivers concurrently, and order is `sequence` order among the messages queued when
    // the holder reads (docs/bot.md): so each delivery is let through once the one before it holds its
    // claim in Redis, and the burst reaches the store in the order it was sent, whatever the timing.
    let previous: Promise<unknown> = Promise.resolve();
    const claimed = async (id: string) => {
      while (!(await raw.exists(`${prefix}k:dedupe:${id}`))) await new Promise((r) => setTimeout(r, 1));
    };
    // The load balancer: deliveries alternate between the instances; every third reaches both at once.
    const w = await world(async (request) => {
      const [a, b] = bots;
      const before = previous;
      const answer = (async () => {
        await before;
        if (turn++ % 3 === 0) {
          const [first] = await Promise.all([a!.fetch(request.clone()), b!.fetch(request)]);
          return first;
        }
        return (turn % 2 ? b! : a!).fetch(request);
      })();
      previous = Promise.race([answer, before.then(() => claimed(request.headers.get('webhook-id')!))]);
      return answer;
    });
    const clients = [await connectClient(redis.url), await connectClient(redis.url)];
    const stores = clients.map((client) => createRedisStore({ client, prefix }));
    const runs: string[] = [];
    let running = 0;
    let overlapped = false;
    bots = stores.map((store) => {
      const bot = createBot({
        apiKey: w.seed.apiKey,
        webhookSecret: w.seed.webhookSecret,
        ...w.connection,
        store,
      });
      bot.on('message.received', async (ctx) => {
        overlapped ||= running > 0;
        running++;
        runs.push(ctx.text);
        await ctx.reply(`re ${ctx.text}`);
        running--;
      });
      return bot;
    });

    for (let i = 0; i < 8; i++)
      w.mock.postUserMessage(w.seed.conversationId, { user_id: w.seed.user.id, text: `m${i}` });
    await w.mock.idle();
    await Promise.all(bots.map((bot) => bot.idle()));
    for (let i = 0; i < 3 && (await w.replies()).length < 8; i++) {
      await w.mock.clock.advance(5); // a delivery answered 409 while its twin ran comes back
      await w.mock.idle();
      await Promise.all(bots.map((bot) => bot.idle()));
    }

    const expected = Array.from({ length: 8 }, (_, i) => `m${i}`);
    expect([...runs].sort()).toEqual(expected); // each handler once, across both processes
    expect(await w.replies()).toEqual(expected.map((text) => `re ${text}`)); // in order, none doubled
    expect(overlapped).toBe(false);
    const ids = new Set(
      w.mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.event_id),
    );
    for (const id of ids) expect(await raw.get(`${prefix}k:dedupe:${id}`)).toBe('done');
    await Promise.all(stores.map((store) => store.close()));
    for (const client of clients) client.destroy();
  });

  it('Redis away at delivery: 503 and no handler; back: the retry runs it once and it is marked done', async () => {
    const proxy = await cuttableProxy(new URL(redis.url));
    const client = await connectClient(proxy.url());
    const prefix = uniquePrefix('away');
    // Past a loaded machine's stalls, so only the cut makes a command time out.
    const store = createRedisStore({ client, prefix, timeoutMs: 1_000 });
    let bot: Bot | undefined;
    const w = await world((request) => bot!.fetch(request));
    bot = createBot({ apiKey: w.seed.apiKey, webhookSecret: w.seed.webhookSecret, ...w.connection, store });
    bot.onError(() => undefined); // the store failure is reported; this test reads the answers instead
    let runs = 0;
    bot.on('message.received', async (ctx) => {
      runs++;
      await ctx.reply(`re ${ctx.text}`);
    });

    await proxy.cut();
    w.mock.postUserMessage(w.seed.conversationId, { user_id: w.seed.user.id, text: 'hello' });
    await w.mock.idle();
    const [first] = w.mock.deliveries.filter((d) => d.type === 'message.received');
    expect(first?.status).toBe(503);
    expect(runs).toBe(0);

    await proxy.open();
    await expect
      .poll(
        () =>
          store.get('probe').then(
            () => 'up',
            () => 'down',
          ),
        { interval: 50 },
      )
      .toBe('up');
    expect(await raw.get(`${prefix}k:dedupe:${first!.event_id}`)).toBeNull(); // nothing recorded
    await w.mock.clock.advance(5);
    await w.mock.idle();
    await bot.idle();
    const attempts = w.mock.deliveries.filter((d) => d.event_id === first!.event_id).map((d) => d.status);
    expect(attempts).toEqual([503, 200]);
    expect(runs).toBe(1);
    expect(await w.replies()).toEqual(['re hello']);
    expect(await raw.get(`${prefix}k:dedupe:${first!.event_id}`)).toBe('done');
    expect(await raw.pTTL(`${prefix}k:dedupe:${first!.event_id}`)).toBeGreaterThan(17.5 * 3600 * 1000);
    await store.close();
    client.destroy();
    await proxy.cut();
  });

  it('Redis gone mid-handler: the delivery fails for a retry and is not marked done', async () => {
    const proxy = await cuttableProxy(new URL(redis.url));
    const client = await connectClient(proxy.url());
    const prefix = uniquePrefix('mid');
    // Past a loaded machine's stalls, so only the cut makes a command time out.
    const store = createRedisStore({ client, prefix, timeoutMs: 1_000 });
    let bot: Bot | undefined;
    const w = await world((request) => bot!.fetch(request));
    bot = createBot({ apiKey: w.seed.apiKey, webhookSecret: w.seed.webhookSecret, ...w.connection, store });
    bot.onError(() => undefined);
    bot.on('message.received', async () => {
      await proxy.cut(); // Redis goes away while the handler runs
    });
    w.mock.postUserMessage(w.seed.conversationId, { user_id: w.seed.user.id, text: 'hello' });
    await w.mock.idle();
    await bot.idle();
    const [first] = w.mock.deliveries.filter((d) => d.type === 'message.received');
    expect(first?.status).toBeGreaterThanOrEqual(500); // the service will retry
    await proxy.open();
    // The claim taken before the cut is still 'in_flight' (it expires on its own), never 'done'.
    expect(await raw.get(`${prefix}k:dedupe:${first!.event_id}`)).toBe('in_flight');
    await store.close();
    client.destroy();
    await proxy.cut();
  });
});
