// The Redis store on ioredis (fromIoredis) against the shared BotStore contract and its compound
// steps, on a real redis-server: the same suite node-redis passes, so the mapping is whole.

import { ValidationError } from 'agent-messaging';
import { createRedisStore, fromIoredis, StoreUnavailableError } from 'agent-messaging/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cuttableProxy } from './cuttable-proxy.js';
import { describeRedisContracts } from './redis-contracts.js';
import { startRedis, type TestRedis, uniquePrefix } from './redis-server.js';

let redis: TestRedis;
let clients: Redis[] = [];

beforeAll(async () => {
  redis = await startRedis();
  clients = [0, 1].map(() => new Redis(redis.url, { enableOfflineQueue: false }));
  await Promise.all(clients.map((io) => new Promise((resolve) => io.once('ready', resolve))));
});

afterAll(async () => {
  for (const io of clients) io.disconnect();
  await redis?.stop();
});

describeRedisContracts('Redis store on ioredis', () => [fromIoredis(clients[0]!), fromIoredis(clients[1]!)]);

describe('ioredis and a Redis that goes away', () => {
  it('a client that would queue commands while Redis is away is refused, naming the option', async () => {
    const queueing = new Redis(redis.url, { lazyConnect: true });
    const error = (() => {
      try {
        fromIoredis(queueing);
      } catch (e) {
        return e;
      }
    })();
    expect(ValidationError.is(error)).toBe(true);
    expect((error as ValidationError).issues[0]?.field).toBe('client.options.enableOfflineQueue');
    expect(() => fromIoredis({} as never)).toThrow(/must be an ioredis client/);
  });

  it('with the offline queue off (docs/bot.md), calls fail as StoreUnavailableError and none lands late', async () => {
    const proxy = await cuttableProxy(new URL(redis.url));
    const io = new Redis(proxy.url(), { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    io.on('error', () => {}); // the cut is expected; the store reports through its own errors
    await new Promise((resolve) => io.once('ready', resolve));
    const prefix = uniquePrefix('io-cut');
    const store = createRedisStore({ client: fromIoredis(io), prefix, timeoutMs: 1_000 });
    await store.set('kept', 'before the cut');

    await proxy.cut();
    const calls = {
      setIfAbsent: () => store.setIfAbsent('evt_1', 'in_flight', 60_000),
      acquireLock: () => store.acquireLock('cnv_1', 60_000),
      get: () => store.get('kept'),
    };
    for (const [operation, call] of Object.entries(calls)) {
      const error = await call().catch((e: unknown) => e);
      expect(StoreUnavailableError.is(error), `${operation}: ${String(error)}`).toBe(true);
    }

    await proxy.open();
    await expect
      .poll(() => store.get('kept').catch(() => 'unavailable'), { interval: 50, timeout: 5_000 })
      .toBe('before the cut');
    // Nothing the failed calls asked for was applied once Redis was back.
    expect(await clients[0]!.exists(`${prefix}k:evt_1`)).toBe(0);
    expect(await store.acquireLock('cnv_1', 1_000)).toBeDefined();
    await store.close();
    io.disconnect();
    await proxy.cut();
  });
});
