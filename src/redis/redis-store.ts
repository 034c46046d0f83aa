// The bot store on Redis: the same contract as the memory store (test/store/contract.ts runs both),
// shared by every instance of a bot. One command or one Lua script per method, so each is atomic
// across processes (admit and settle too: a delivery costs those two round trips). Key layout (docs/bot.md, "Running many instances"), with `{p}` the prefix:
//   {p}k:{key}        string values: dedupe claims, leases, counters, sessions (PX = the caller's TTL)
//   {p}lock:{key}     lock owner tokens (SET NX PX; renew and release check the token in Lua)
//   {p}q:{key}        queues, sorted sets scored by the caller (PEXPIRE on every enqueue)
//   {p}ch:{channel}   pub/sub channels (no key; PUBLISH/SUBSCRIBE)

import { nanoid } from 'nanoid';
import { ValidationError } from '../core/errors.js';
import type { BotStore, StoreLock } from '../store/bot-store.js';
import type { AdmitRequest, AdmitResult, SettleRequest, SettleResult } from '../store/compound.js';
import { createCommands } from './commands.js';
import { ADMIT, SETTLE } from './compound-scripts.js';
import { type RedisStoreOptions, resolveRedisStoreOptions } from './options.js';
import { createPubSub } from './pubsub.js';
import { COMPARE_AND_SET, ENQUEUE, INCREMENT, READ_QUEUED, RELEASE_LOCK, RENEW_LOCK } from './scripts.js';

/** A {@link BotStore} on Redis, with a way to close the connection the store opened itself. */
export interface RedisStore extends BotStore {
  /** A delivery's claim, enqueue, lock try and take: one Lua script, one round trip. */
  admit(request: AdmitRequest): Promise<AdmitResult>;
  /** Its done marks, then the next take or the release and its publish: one Lua script, one round trip. */
  settle(request: SettleRequest): Promise<SettleResult>;
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
function lastIndex(limit: number | undefined, operation: string): string {
  if (limit === undefined) return '-1';
  if (!Number.isInteger(limit) || limit < 1) {
    throw new ValidationError([{ field: 'limit', message: 'must be an integer of at least 1' }], operation);
  }
  return String(limit - 1);
}

/** Queue members as a script answers them (an empty queue may come back as nothing at all). */
const strings = (members: unknown): string[] => (Array.isArray(members) ? members.map(String) : []);

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
  const resolved = resolveRedisStoreOptions(options);
  const { prefix } = resolved;
  const commands = createCommands(resolved.client, resolved.timeoutMs);
  const pubsub = createPubSub(resolved, commands);
  const { send, evalScript } = commands;

  const valueKey = (key: string) => `${prefix}k:${key}`;
  const lockKey = (key: string) => `${prefix}lock:${key}`;
  const queueKey = (key: string) => `${prefix}q:${key}`;
  const channelName = (channel: string) => `${prefix}ch:${channel}`;

  return {
    async setIfAbsent(key, value, ttlMs) {
      const ttl = px(ttlMs, 'setIfAbsent');
      return (await send('setIfAbsent', ['SET', valueKey(key), value, 'NX', 'PX', ttl])) !== null;
    },
    async get(key) {
      const value = await send('get', ['GET', valueKey(key)]);
      return value === null ? undefined : String(value);
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
      const ttl = px(ttlMs, 'increment');
      return Number(await evalScript('increment', INCREMENT, [valueKey(key)], [ttl]));
    },

    async acquireLock(key, ttlMs) {
      const lock: StoreLock = { key, token: nanoid() };
      const reply = await send('acquireLock', [
        'SET',
        lockKey(key),
        lock.token,
        'NX',
        'PX',
        px(ttlMs, 'acquireLock'),
      ]);
      return reply === null ? undefined : lock;
    },
    async renewLock(lock, ttlMs) {
      const ttl = px(ttlMs, 'renewLock');
      return (await evalScript('renewLock', RENEW_LOCK, [lockKey(lock.key)], [lock.token, ttl])) === 1;
    },
    async releaseLock(lock) {
      return (await evalScript('releaseLock', RELEASE_LOCK, [lockKey(lock.key)], [lock.token])) === 1;
    },

    async enqueue(key, member, score, ttlMs) {
      const args = [checkScore(score, 'enqueue'), member, px(ttlMs, 'enqueue')];
      await evalScript('enqueue', ENQUEUE, [queueKey(key)], args);
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
        lastIndex(limit, 'admit'),
        read === undefined ? '0' : '1',
      ];
      const [step, answer, value] = (await evalScript('admit', ADMIT, keys, args)) as [
        number,
        unknown,
        unknown,
      ];
      if (step === 0) return { claimed: false, current: answer == null ? undefined : String(answer) };
      if (step === 1) return { claimed: true, lock: undefined };
      const held = { key: lock.key, token };
      if (read === undefined) return { claimed: true, lock: held, queued: strings(answer) };
      return {
        claimed: true,
        lock: held,
        queued: strings(answer),
        value: value == null ? undefined : String(value),
      };
    },
    async settle({
      lock,
      lockTtlMs,
      queueTtlMs,
      marks,
      settled,
      queue,
      released,
      limit,
    }): Promise<SettleResult> {
      const keys = [lockKey(lock.key), queueKey(queue)];
      const args = [
        lock.token,
        px(lockTtlMs, 'settle'),
        channelName(released.channel),
        released.message,
        queueTtlMs === undefined ? '' : px(queueTtlMs, 'settle'),
        lastIndex(limit, 'settle'),
        String(settled.length),
        ...settled,
      ];
      for (const mark of marks) {
        keys.push(valueKey(mark.key));
        args.push(mark.value, px(mark.ttlMs, 'settle'));
      }
      const [step, answer] = (await evalScript('settle', SETTLE, keys, args)) as [number, unknown];
      if (step === 0) return { outcome: 'lost' };
      if (step === 1) return { outcome: 'queued', queued: strings(answer) };
      return { outcome: 'released' };
    },

    async publish(channel, message) {
      await send('publish', ['PUBLISH', channelName(channel), message]);
    },
    subscribe: (channel, onMessage) => pubsub.subscribe(channelName(channel), onMessage),
    close: () => pubsub.close(),
  };
}
