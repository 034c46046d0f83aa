// The bot store on Redis: the same contract as the memory store (test/store/contract.ts runs both),
// shared by every instance of a bot. One command or one Lua script per method, so each is atomic
// across processes (admit and settle too: a delivery costs those two round trips). Key layout (docs/bot.md, "Running many instances"), with `{p}` the prefix:
//   {p}k:{key}        string values: dedupe claims, leases, counters, sessions (PX = the caller's TTL)
//   {p}lock:{key}     lock owner tokens (SET NX PX; renew and release check the token in Lua)
//   {p}q:{key}        queues, sorted sets scored by the caller (PEXPIRE on every enqueue)
//   {p}ch:{channel}   pub/sub channels (no key; PUBLISH/SUBSCRIBE)
//
// Every call runs under a deadline (a Redis that went away leaves node-redis queueing commands
// offline until it reconnects, which could be never), and every failure becomes a
// StoreUnavailableError naming the operation, so the runtime answers 503.
//
// Publish/subscribe: a connection in subscribe mode can send nothing else, so the store opens its own
// subscriber (`client.duplicate()`) on the first subscribe and keeps it for every channel. A message
// reaches every subscriber connected when it is published, one network hop later. Redis pub/sub is at
// most once: a subscriber whose connection is down (Redis restarting, a network cut) misses what is
// published until it has reconnected and resubscribed. Nothing is ever delivered twice.

import { nanoid } from 'nanoid';
import * as z from 'zod/mini';
import { ValidationError } from '../core/errors.js';
import { fn, parseInput } from '../core/validate.js';
import type { BotStore, StoreLock } from '../store/bot-store.js';
import type { AdmitResult, SettleResult } from '../store/compound.js';
import { StoreUnavailableError } from '../store/store-error.js';
import type { RedisStoreClient, RedisStoreSubscriber } from './client.js';
import {
  ADMIT,
  COMPARE_AND_SET,
  IF_OWNER,
  type LuaScript,
  READ_QUEUED,
  SETTLE,
  WITH_TTL,
} from './scripts.js';

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /** A connected node-redis 5 client (`await createClient({ url }).connect()`), or an equivalent. */
  client: RedisStoreClient;
  /** Put before every key and channel, so several bots share one Redis. `agent-messaging:` by default. */
  prefix?: string;
  /**
   * How long one store call may take before it fails with a `StoreUnavailableError` (the delivery then
   * answers 503 and the service retries). 2,000 ms by default.
   */
  timeoutMs?: number;
  /** Errors of the store's own subscriber connection (reconnects after Redis went away). Ignored by default. */
  onError?: (error: Error) => void;
}

const isClient = (client: unknown): client is RedisStoreClient =>
  typeof (client as RedisStoreClient | null)?.sendCommand === 'function' &&
  typeof (client as RedisStoreClient).duplicate === 'function';

// A prefix is printable ASCII without the space: it shows up verbatim in `redis-cli --scan` and in
// ACL key patterns, where spaces and control characters are a trap. `{`/`}` stay allowed (cluster
// hash tags).
const RedisStoreOptionsSchema = z.object({
  client: z
    .custom<RedisStoreClient>(isClient, {
      error: 'must be a node-redis 5 client (createClient() from "redis")',
    })
    .check(
      z.refine((client) => client.isOpen, {
        error: 'is not connected: call `await client.connect()` first',
      }),
    ),
  prefix: z.optional(
    z.string().check(
      z.regex(/^[\x21-\x7e]{1,64}$/, {
        error: 'must be 1 to 64 printable ASCII characters with no spaces (such as "my-bot:")',
      }),
    ),
  ),
  timeoutMs: z.optional(z.number({ error: 'must be a positive number of milliseconds' }).check(z.positive())),
  onError: z.optional(fn<(error: Error) => void>()),
});

/**
 * A {@link BotStore} on Redis (its admit and settle one Lua script, one round trip each), with a way
 * to close the connection the store opened itself.
 */
export interface RedisStore extends BotStore {
  /** Closes the store's own subscriber connection; the client you passed stays yours to close. */
  close(): Promise<void>;
}

/** A TTL as PX takes it: a whole number of milliseconds, at least 1. */
function px(ttlMs: number, operation: string): string {
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new ValidationError(
      [{ field: 'ttlMs', message: 'must be a positive number of milliseconds' }],
      operation,
    );
  }
  return String(Math.ceil(ttlMs));
}

/** A queue score as ZADD takes it: any finite number. */
function checkScore(score: number, operation: string): string {
  if (typeof score !== 'number' || !Number.isFinite(score)) {
    throw new ValidationError([{ field: 'score', message: 'must be a finite number' }], operation);
  }
  return String(score);
}

/** The ZRANGE stop index of a read of at most `limit` members (-1: all of them). */
const lastIndex = (limit: number | undefined) => (limit === undefined ? '-1' : String(limit - 1));

/** Queue members as a script answers them (an empty queue may come back as nothing at all). */
const strings = (members: unknown): string[] => (Array.isArray(members) ? members.map(String) : []);

/** A reply's string, or undefined for Redis's nil. */
const optional = (value: unknown) => (value == null ? undefined : String(value));

const isNoScript = (error: unknown) => error instanceof Error && error.message.startsWith('NOSCRIPT');

/**
 * The bot store on Redis, for a bot that runs as several instances (processes, machines): dedupe,
 * per-conversation locks and queues, reply leases, sessions and interrupts hold across all of them.
 * Give it a connected node-redis 5 client; a Redis-compatible server (Valkey) works the same.
 * Every method rejects with a `StoreUnavailableError` when Redis does not answer in `timeoutMs`.
 *
 * @example
 * import { createClient } from 'redis';
 * import { createBot } from 'agent-messaging';
 * import { createRedisStore } from 'agent-messaging/redis';
 *
 * const client = createClient({ url: process.env.REDIS_URL });
 * client.on('error', (error) => console.error('redis', error.message));
 * await client.connect();
 * const bot = createBot({ apiKey, webhookSecret, store: createRedisStore({ client, prefix: 'my-bot:' }) });
 */
export function createRedisStore(options: RedisStoreOptions): RedisStore {
  parseInput(RedisStoreOptionsSchema, options, 'createRedisStore');
  const { client, prefix = 'agent-messaging:', timeoutMs = 2_000, onError = () => {} } = options;

  const valueKey = (key: string) => `${prefix}k:${key}`;
  const lockKey = (key: string) => `${prefix}lock:${key}`;
  const queueKey = (key: string) => `${prefix}q:${key}`;
  const channelName = (channel: string) => `${prefix}ch:${channel}`;

  const guard = async <T>(operation: string, run: () => Promise<T>): Promise<T> => {
    if (!client.isOpen) {
      throw new StoreUnavailableError(
        operation,
        'the Redis client is closed (was it closed or never connected?)',
      );
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new StoreUnavailableError(operation, `Redis did not answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      // race() subscribes to `run()`'s promise, so its late rejection after the deadline is handled.
      return await Promise.race([run(), deadline]);
    } catch (error) {
      if (StoreUnavailableError.is(error)) throw error;
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw new StoreUnavailableError(operation, reason, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  };
  // `timeout` lets node-redis drop a command it still holds unsent (offline) once the deadline passed.
  const raw = (args: string[]) => client.sendCommand(args, { timeout: timeoutMs });
  const send = (operation: string, args: string[]) => guard(operation, () => raw(args));
  const evalScript = (operation: string, script: LuaScript, keys: string[], args: string[]) =>
    guard(operation, async () => {
      const tail = [String(keys.length), ...keys, ...args];
      try {
        return await raw(['EVALSHA', script.sha, ...tail]);
      } catch (error) {
        if (!isNoScript(error)) throw error;
        return raw(['EVAL', script.source, ...tail]);
      }
    });

  let subscriber: Promise<RedisStoreSubscriber> | undefined;
  const connectSubscriber = () => {
    subscriber ??= (async () => {
      const connection = client.duplicate();
      connection.on('error', onError);
      try {
        await connection.connect();
        return connection;
      } catch (error) {
        connection.destroy();
        throw error;
      }
    })().catch((error: unknown) => {
      subscriber = undefined; // the next subscribe tries again
      throw error;
    });
    return subscriber;
  };

  return {
    async setIfAbsent(key, value, ttlMs) {
      const ttl = px(ttlMs, 'setIfAbsent');
      return (await send('setIfAbsent', ['SET', valueKey(key), value, 'NX', 'PX', ttl])) !== null;
    },
    async get(key) {
      return optional(await send('get', ['GET', valueKey(key)]));
    },
    async set(key, value, ttlMs) {
      const args = ['SET', valueKey(key), value];
      if (ttlMs !== undefined) args.push('PX', px(ttlMs, 'set'));
      await send('set', args);
    },
    async compareAndSet(key, expected, next, ttlMs) {
      const ttl = ttlMs === undefined ? '' : px(ttlMs, 'compareAndSet');
      const args = [
        expected === undefined ? '0' : '1',
        expected ?? '',
        next === undefined ? '0' : '1',
        next ?? '',
        ttl,
      ];
      return (await evalScript('compareAndSet', COMPARE_AND_SET, [valueKey(key)], args)) === 1;
    },
    async delete(key) {
      await send('delete', ['DEL', valueKey(key)]);
    },
    async increment(key, ttlMs) {
      const args = [px(ttlMs, 'increment'), 'INCR'];
      return Number(await evalScript('increment', WITH_TTL, [valueKey(key)], args));
    },

    async acquireLock(key, ttlMs) {
      const lock: StoreLock = { key, token: nanoid() };
      const ttl = px(ttlMs, 'acquireLock');
      const reply = await send('acquireLock', ['SET', lockKey(key), lock.token, 'NX', 'PX', ttl]);
      return reply === null ? undefined : lock;
    },
    async renewLock(lock, ttlMs) {
      const args = [lock.token, px(ttlMs, 'renewLock')];
      return (await evalScript('renewLock', IF_OWNER, [lockKey(lock.key)], args)) === 1;
    },
    async releaseLock(lock) {
      return (await evalScript('releaseLock', IF_OWNER, [lockKey(lock.key)], [lock.token, ''])) === 1;
    },

    async enqueue(key, member, score, ttlMs) {
      const args = [px(ttlMs, 'enqueue'), 'ZADD', checkScore(score, 'enqueue'), member];
      await evalScript('enqueue', WITH_TTL, [queueKey(key)], args);
    },
    async readQueued(key, settled = []) {
      return strings(await evalScript('readQueued', READ_QUEUED, [queueKey(key)], [...settled]));
    },

    async admit({ claim, queue, lock, limit, read }): Promise<AdmitResult> {
      const score = checkScore(queue.score, 'admit');
      const token = nanoid();
      const keys = [
        claim ? valueKey(claim.key) : queueKey(queue.key),
        queueKey(queue.key),
        lockKey(lock.key),
        read === undefined ? queueKey(queue.key) : valueKey(read),
      ];
      const args = [
        claim ? '1' : '0',
        claim?.value ?? '',
        claim ? px(claim.ttlMs, 'admit') : '',
        score,
        queue.member,
        px(queue.ttlMs, 'admit'),
        token,
        px(lock.ttlMs, 'admit'),
        lastIndex(limit),
        read === undefined ? '0' : '1',
      ];
      const [step, answer, value] = (await evalScript('admit', ADMIT, keys, args)) as unknown[];
      if (step === 0) return { claimed: false, current: optional(answer) };
      if (step === 1) return { claimed: true, lock: undefined };
      const held = { key: lock.key, token };
      return {
        claimed: true,
        lock: held,
        queued: strings(answer),
        ...(read ? { value: optional(value) } : {}),
      };
    },
    async settle(request): Promise<SettleResult> {
      const { lock, lockTtlMs, queueTtlMs, marks, settled, queue, released, limit } = request;
      const keys = [lockKey(lock.key), queueKey(queue)];
      const args = [
        lock.token,
        px(lockTtlMs, 'settle'),
        channelName(released.channel),
        released.message,
        queueTtlMs === undefined ? '' : px(queueTtlMs, 'settle'),
        lastIndex(limit),
        String(settled.length),
        ...settled,
      ];
      for (const mark of marks) {
        keys.push(valueKey(mark.key));
        args.push(mark.value, px(mark.ttlMs, 'settle'));
      }
      const [step, answer] = (await evalScript('settle', SETTLE, keys, args)) as unknown[];
      if (step === 0) return { outcome: 'lost' };
      if (step === 1) return { outcome: 'queued', queued: strings(answer) };
      return { outcome: 'released' };
    },

    async publish(channel, message) {
      await send('publish', ['PUBLISH', channelName(channel), message]);
    },
    subscribe: (channel, onMessage) =>
      guard('subscribe', async () => {
        const name = channelName(channel);
        const connection = await connectSubscriber();
        // A listener of its own, so each subscription is its own entry even for one function (as in
        // the memory store); the client sends SUBSCRIBE for a channel's first, UNSUBSCRIBE for its last.
        const listener = (message: string) => onMessage(message);
        await connection.subscribe(name, listener);
        return async () => {
          // After close(), the connection is gone and so is the subscription.
          if ((await subscriber?.catch(() => undefined)) !== connection) return;
          // A failed UNSUBSCRIBE only costs a dispatch to no one.
          await connection.unsubscribe(name, listener).catch((error: unknown) => {
            onError(error instanceof Error ? error : new Error(String(error)));
          });
        };
      }),
    async close() {
      const connection = await subscriber?.catch(() => undefined);
      subscriber = undefined;
      connection?.destroy();
    },
  };
}
