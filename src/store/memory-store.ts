// The default bot store: one process, in memory, bounded. Every method runs its step in one call with
// no await inside, so each is atomic against the others, as the interface requires; `admit` and
// `settle`, a delivery's two steps, answer at once (a value, not a promise), since nothing in them
// is pending.

import type { BotStore, StoreLock } from './bot-store.js';
import type { AdmitRequest, AdmitResult, SettleRequest, SettleResult } from './compound.js';

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Most keys kept; when full, what expired goes, then the entries written longest ago, down to nine
   * tenths of it. 100,000 by default.
   */
  maxEntries?: number;
  /** The clock, in epoch milliseconds; `Date.now` by default. */
  now?: () => number;
}

interface Queue {
  members: Map<string, number>;
  /** The highest score queued; a member below it leaves the queue out of order until the next read. */
  top: number;
  ordered: boolean;
  expiresAt: number;
}

interface Entry {
  value: string;
  /** Epoch ms after which the key is gone; `Infinity` for none. */
  expiresAt: number;
}

/**
 * A {@link BotStore} in this process's memory: right for one instance of a bot. Several instances
 * need a shared store (`createRedisStore` from `agent-messaging/redis`).
 *
 * @example
 * const bot = createBot({ apiKey, webhookSecret, store: createMemoryStore({ maxEntries: 10_000 }) });
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): BotStore {
  const { maxEntries = 100_000, now = Date.now } = options;
  const entries = new Map<string, Entry>();
  // A queue's members and their scores, kept lowest first: a member that comes in order (as messages
  // mostly do) goes at the end, so only one that came out of order makes the next read sort them.
  const queues = new Map<string, Queue>();
  const channels = new Map<string, Set<(message: string) => void>>();

  // A key's entry while it lives, in the keys (or in the locks, a key space of their own as in Redis).
  const live = (key: string, table = entries): Entry | undefined => {
    const entry = table.get(key);
    if (entry && entry.expiresAt <= now()) {
      table.delete(key);
      return undefined;
    }
    return entry;
  };

  // Full: forget what expired, then the entries written longest ago (a Map keeps the order of its
  // writes, and `write` puts a key back at the end), down to nine tenths of the bound, so a full
  // store scans itself once per tenth of the bound, not on every write. Never the soonest to expire
  // first: that is a claim in flight or a session, which its holder rewrote a moment ago, and
  // dropping a live claim would let a retry run its message again beside the run; the oldest handled
  // ids are the ones the service's retries are least likely to come back for.
  const evictIfFull = () => {
    if (entries.size < maxEntries) return;
    const at = now();
    for (const [key, entry] of entries) if (entry.expiresAt <= at) entries.delete(key);
    const keep = Math.floor(maxEntries * 0.9);
    for (const key of entries.keys()) {
      if (entries.size <= keep) break;
      entries.delete(key);
    }
  };

  const write = (key: string, value: string, ttlMs: number | undefined) => {
    const expiresAt = ttlMs === undefined ? Number.POSITIVE_INFINITY : now() + ttlMs;
    entries.delete(key);
    evictIfFull();
    entries.set(key, { value, expiresAt });
  };

  const locks = new Map<string, Entry>();
  let tokens = 0;
  const holds = (lock: StoreLock) => live(lock.key, locks)?.value === lock.token;
  const acquireLock = (key: string, ttlMs: number): StoreLock | undefined => {
    if (live(key, locks)) return undefined;
    // Locks that are never taken again still go: a new one in a full table first forgets the expired.
    if (locks.size >= maxEntries) {
      const at = now();
      for (const [other, held] of locks) if (held.expiresAt <= at) locks.delete(other);
    }
    const lock: StoreLock = { key, token: `m${++tokens}` };
    locks.set(key, { value: lock.token, expiresAt: now() + ttlMs });
    return lock;
  };
  const renewLock = (lock: StoreLock, ttlMs: number) => {
    if (!holds(lock)) return false;
    locks.set(lock.key, { value: lock.token, expiresAt: now() + ttlMs });
    return true;
  };
  const releaseLock = (lock: StoreLock) => holds(lock) && locks.delete(lock.key);

  const setIfAbsent = (key: string, value: string, ttlMs: number) => {
    if (live(key)) return false;
    write(key, value, ttlMs);
    return true;
  };
  const enqueue = (key: string, member: string, score: number, ttlMs: number) => {
    let queue = queues.get(key);
    if (!queue || queue.expiresAt <= now()) {
      queue = { members: new Map(), top: score, ordered: true, expiresAt: 0 };
      queues.set(key, queue);
    }
    const had = queue.members.get(member);
    if (had === undefined ? score < queue.top : had !== score) queue.ordered = false;
    queue.top = Math.max(queue.top, score);
    queue.members.set(member, score);
    queue.expiresAt = now() + ttlMs;
  };
  // The queue's members lowest score first, at most `limit` of them (all without one).
  const readQueued = (key: string, settled: readonly string[] = [], limit?: number): string[] => {
    const queue = queues.get(key);
    if (!queue || queue.expiresAt <= now()) {
      queues.delete(key);
      return [];
    }
    for (const member of settled) queue.members.delete(member);
    if (queue.members.size === 0) queues.delete(key);
    if (!queue.ordered) {
      queue.members = new Map([...queue.members].sort((a, b) => a[1] - b[1]));
      queue.ordered = true;
    }
    const read: string[] = [];
    for (const member of queue.members.keys()) {
      if (read.length === limit) break;
      read.push(member);
    }
    return read;
  };
  const publish = (channel: string, message: string) => {
    // Delivered after the publisher's turn, as a network store would deliver it.
    for (const listener of channels.get(channel) ?? []) queueMicrotask(() => listener(message));
  };

  return {
    setIfAbsent: async (key, value, ttlMs) => setIfAbsent(key, value, ttlMs),
    get: async (key) => live(key)?.value,
    set: async (key, value, ttlMs) => write(key, value, ttlMs),
    async compareAndSet(key, expected, next, ttlMs) {
      if (live(key)?.value !== expected) return false;
      if (next === undefined) entries.delete(key);
      else write(key, next, ttlMs);
      return true;
    },
    async delete(key) {
      entries.delete(key);
    },
    async increment(key, ttlMs) {
      const value = Number(live(key)?.value ?? 0) + 1;
      write(key, String(value), ttlMs);
      return value;
    },
    acquireLock: async (key, ttlMs) => acquireLock(key, ttlMs),
    renewLock: async (lock, ttlMs) => renewLock(lock, ttlMs),
    releaseLock: async (lock) => releaseLock(lock),
    enqueue: async (key, member, score, ttlMs) => enqueue(key, member, score, ttlMs),
    readQueued: async (key, settled) => readQueued(key, settled),
    publish: async (channel, message) => publish(channel, message),
    async subscribe(channel, onMessage) {
      const listeners = channels.get(channel) ?? new Set<(message: string) => void>();
      channels.set(channel, listeners);
      // Each subscription is its own entry, even for the same function.
      const listener = (message: string) => onMessage(message);
      listeners.add(listener);
      return async () => {
        listeners.delete(listener);
        if (listeners.size === 0) channels.delete(channel);
      };
    },
    // The delivery's two steps answer at once: nothing in them is pending.
    admit({ claim, queue, lock, limit, read }: AdmitRequest): AdmitResult {
      if (claim && !setIfAbsent(claim.key, claim.value, claim.ttlMs)) {
        return { claimed: false, current: live(claim.key)?.value };
      }
      enqueue(queue.key, queue.member, queue.score, queue.ttlMs);
      const held = acquireLock(lock.key, lock.ttlMs);
      if (!held) return { claimed: true, lock: undefined };
      const queued = readQueued(queue.key, [], limit);
      if (read === undefined) return { claimed: true, lock: held, queued };
      return { claimed: true, lock: held, queued, value: live(read)?.value };
    },
    settle(request: SettleRequest): SettleResult {
      const { lock, lockTtlMs, queueTtlMs, marks, settled, queue, released, limit } = request;
      for (const mark of marks) write(mark.key, mark.value, mark.ttlMs);
      if (!holds(lock)) return { outcome: 'lost' };
      const queued = readQueued(queue, settled, limit);
      if (queued.length > 0) {
        renewLock(lock, lockTtlMs);
        const kept = queues.get(queue);
        if (kept && queueTtlMs !== undefined) kept.expiresAt = now() + queueTtlMs;
        return { outcome: 'queued', queued };
      }
      releaseLock(lock);
      publish(released.channel, released.message);
      return { outcome: 'released' };
    },
  };
}
