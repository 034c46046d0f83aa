// The Redis store beyond the shared contract: its checks at construction, the key layout and TTLs
// docs/bot.md documents, scripts a restarted server no longer knows, and a Redis that goes away.

import { StoreUnavailableError, ValidationError } from 'agent-messaging';
import { createRedisStore, type RedisStoreClient } from 'agent-messaging/redis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cuttableProxy } from './cuttable-proxy.js';
import { connectClient, startRedis, type TestRedis, uniquePrefix } from './redis-server.js';

let redis: TestRedis;
let client: Awaited<ReturnType<typeof connectClient>>;

beforeAll(async () => {
  redis = await startRedis();
  client = await connectClient(redis.url);
});

afterAll(async () => {
  client?.destroy();
  await redis?.stop();
});

function validationError(run: () => unknown): ValidationError {
  try {
    run();
  } catch (error) {
    if (ValidationError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a ValidationError');
}

describe('createRedisStore: bad input, before anything is sent', () => {
  it('a client that is not connected is a ValidationError naming `client`', () => {
    const idle = createClient({ url: redis.url });
    const error = validationError(() => createRedisStore({ client: idle }));
    expect(error.field).toBe('client');
    expect(error.message).toContain('not connected');
  });

  it('something that is not a client is a ValidationError naming `client`', () => {
    const error = validationError(() => createRedisStore({ client: {} as RedisStoreClient }));
    expect(error.field).toBe('client');
  });

  it('a prefix with spaces (or empty, or control characters) is a ValidationError naming `prefix`', () => {
    for (const prefix of ['my bot:', '', 'tab\there', 'x'.repeat(65)]) {
      const error = validationError(() => createRedisStore({ client, prefix }));
      expect(error.field).toBe('prefix');
    }
    expect(createRedisStore({ client, prefix: '{my-bot}:' })).toBeDefined();
  });

  it('a bad timeoutMs names `timeoutMs`; a TTL that is not positive names `ttlMs` and writes nothing', async () => {
    expect(validationError(() => createRedisStore({ client, timeoutMs: 0 })).field).toBe('timeoutMs');
    const prefix = uniquePrefix('ttl');
    const store = createRedisStore({ client, prefix });
    for (const ttl of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = await store.setIfAbsent('k', 'v', ttl).catch((e: unknown) => e);
      expect(ValidationError.is(error) && error.field).toBe('ttlMs');
    }
    const error = await store.enqueue('q', 'm', Number.NaN, 1000).catch((e: unknown) => e);
    expect(ValidationError.is(error) && error.field).toBe('score');
    expect(await client.keys(`${prefix}*`)).toEqual([]);
  });
});

describe('key layout and TTLs', () => {
  it('values, locks and queues live under `{prefix}k:`, `lock:` and `q:` with the TTL given', async () => {
    const prefix = uniquePrefix('layout');
    const store = createRedisStore({ client, prefix });
    const dedupeTtl = 18 * 60 * 60 * 1000; // the service's whole retry schedule, as the runtime uses it
    await store.setIfAbsent('dedupe:evt_1', 'in_flight', dedupeTtl);
    await store.set('session:cnv_1', '{"n":1}');
    const lock = (await store.acquireLock('cnv_1', 30_000))!;
    await store.enqueue('cnv_1', 'evt_2', 2, 60_000);
    await store.increment('attempts:msg_1', 60_000);

    expect((await client.keys(`${prefix}*`)).sort()).toEqual(
      [`k:attempts:msg_1`, `k:dedupe:evt_1`, `k:session:cnv_1`, `lock:cnv_1`, `q:cnv_1`].map(
        (k) => prefix + k,
      ),
    );
    const dedupePttl = await client.pTTL(`${prefix}k:dedupe:evt_1`);
    expect(dedupePttl).toBeGreaterThan(dedupeTtl - 5_000);
    expect(dedupePttl).toBeLessThanOrEqual(dedupeTtl);
    expect(await client.pTTL(`${prefix}k:session:cnv_1`)).toBe(-1); // no TTL given: none set
    expect(await client.get(`${prefix}lock:cnv_1`)).toBe(lock.token);
    expect(await client.pTTL(`${prefix}lock:cnv_1`)).toBeGreaterThan(25_000);
    expect(await client.type(`${prefix}q:cnv_1`)).toBe('zset');
    expect(await client.pTTL(`${prefix}q:cnv_1`)).toBeGreaterThan(55_000);
  });

  it('Redis itself expires what the store wrote with a TTL (no cleanup job of ours)', async () => {
    const store = createRedisStore({ client, prefix: uniquePrefix('expiry') });
    await store.setIfAbsent('evt_1', 'in_flight', 20);
    await store.acquireLock('cnv_1', 20);
    await store.enqueue('cnv_1', 'evt_1', 1, 20);
    await expect.poll(() => store.get('evt_1'), { interval: 10 }).toBeUndefined();
    await expect.poll(() => store.acquireLock('cnv_1', 60_000), { interval: 10 }).toBeDefined();
    expect(await store.readQueued('cnv_1')).toEqual([]);
  });

  it('two prefixes on one Redis never see each other', async () => {
    const a = createRedisStore({ client, prefix: uniquePrefix('a') });
    const b = createRedisStore({ client, prefix: uniquePrefix('b') });
    expect(await a.setIfAbsent('evt_1', 'a', 60_000)).toBe(true);
    expect(await b.setIfAbsent('evt_1', 'b', 60_000)).toBe(true);
    expect(await a.acquireLock('cnv_1', 60_000)).toBeDefined();
    expect(await b.acquireLock('cnv_1', 60_000)).toBeDefined();
  });

  it('a server that forgot the scripts (restart, SCRIPT FLUSH) gets them again, and the lock logic holds', async () => {
    const store = createRedisStore({ client, prefix: uniquePrefix('noscript') });
    const lock = (await store.acquireLock('cnv_1', 60_000))!;
    expect(await store.renewLock(lock, 60_000)).toBe(true);
    await client.scriptFlush();
    expect(await store.renewLock({ ...lock, token: 'forged' }, 60_000)).toBe(false);
    await client.scriptFlush();
    expect(await store.releaseLock(lock)).toBe(true);
  });
});

describe('a Redis that goes away', () => {
  it('every method rejects with StoreUnavailableError within timeoutMs; it works again once Redis is back', async () => {
    const proxy = await cuttableProxy(new URL(redis.url));
    const viaProxy = await connectClient(proxy.url());
    const prefix = uniquePrefix('cut');
    const store = createRedisStore({ client: viaProxy, prefix, timeoutMs: 1_000 });
    await store.set('kept', 'before the cut');
    const lock = (await store.acquireLock('cnv_1', 60_000))!;
    await store.subscribe('ch', () => {});

    await proxy.cut();
    // admit and settle answer a StoreAnswer: a promise on Redis, awaited as any other.
    const calls: [string, () => unknown][] = [
      ['setIfAbsent', () => store.setIfAbsent('evt_1', 'x', 1000)],
      ['get', () => store.get('kept')],
      ['compareAndSet', () => store.compareAndSet('kept', 'before the cut', 'after')],
      ['acquireLock', () => store.acquireLock('cnv_2', 1000)],
      ['renewLock', () => store.renewLock(lock, 60_000)],
      ['releaseLock', () => store.releaseLock(lock)],
      ['enqueue', () => store.enqueue('q', 'm', 1, 1000)],
      ['readQueued', () => store.readQueued('q', ['m'])],
      ['increment', () => store.increment('n', 1000)],
      ['publish', () => store.publish('ch', 'm')],
      ['subscribe', () => store.subscribe('other', () => {})],
      [
        'admit',
        () =>
          store.admit({
            queue: { key: 'q', member: 'm', score: 1, ttlMs: 1000 },
            lock: { key: 'cnv_3', ttlMs: 1000 },
          }),
      ],
      [
        'settle',
        () =>
          store.settle({
            lock,
            lockTtlMs: 1000,
            marks: [],
            settled: ['m'],
            queue: 'q',
            released: { channel: 'ch', message: '' },
          }),
      ],
    ];
    const errors = await Promise.all(
      calls.map(async ([, call]) => Promise.resolve(call()).catch((e: unknown) => e)),
    );
    errors.forEach((error, i) => {
      const operation = calls[i]![0];
      expect(StoreUnavailableError.is(error), `${operation}: ${String(error)}`).toBe(true);
      expect((error as StoreUnavailableError).operation).toBe(operation);
    });

    await proxy.open();
    await expect
      .poll(() => store.get('kept').catch(() => 'unavailable'), { interval: 50 })
      .toBe('before the cut');
    // Nothing the failed calls may have done was done: the lock is still the holder's, the value unchanged.
    expect(await store.releaseLock(lock)).toBe(true);
    expect(await client.get(`${prefix}k:evt_1`)).toBeNull();
    await store.close();
    viaProxy.destroy();
    await proxy.cut();
  });

  it('a client the application closed: StoreUnavailableError, not a hang', async () => {
    const own = await connectClient(redis.url);
    const store = createRedisStore({ client: own, prefix: uniquePrefix('closed') });
    own.destroy();
    const error = await store.get('k').catch((e: unknown) => e);
    expect(StoreUnavailableError.is(error)).toBe(true);
    expect(String(error)).toContain('closed');
  });

  it('close() ends the store’s own subscriber connection and leaves the application’s client open', async () => {
    const name = `close-${process.pid}`;
    const own = createClient({ url: redis.url, name });
    await own.connect();
    const store = createRedisStore({ client: own, prefix: uniquePrefix('close') });
    await store.subscribe('ch', () => {});
    const named = async () => (await client.clientList()).filter((c) => c.name === name).length;
    expect(await named()).toBe(2); // the duplicate has the client's options, its name too
    await store.close();
    await expect.poll(named, { interval: 20 }).toBe(1);
    expect(await own.ping()).toBe('PONG');
    own.destroy();
  });
});
