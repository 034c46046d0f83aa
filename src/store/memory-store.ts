// The default bot store: one process, in memory, bounded. Every method settles in one microtask
// turn with no await inside, so each is atomic against the others, as the interface requires.

import { nanoid } from 'nanoid';
import type { BotStore, StoreLock, Unsubscribe } from './bot-store.js';

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** Most keys kept; past it the entries closest to expiry go first. 100,000 by default. */
  maxEntries?: number;
  /** The clock, in epoch milliseconds; `Date.now` by default. */
  now?: () => number;
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
  const queues = new Map<string, { members: Map<string, number>; expiresAt: number }>();
  const channels = new Map<string, Set<(message: string) => void>>();

  const live = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (entry && entry.expiresAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };

  const evictIfFull = () => {
    if (entries.size < maxEntries) return;
    const at = now();
    for (const [key, entry] of entries) if (entry.expiresAt <= at) entries.delete(key);
    // Still full: drop the entry that would expire first (a lock or in-flight claim lives shorter than
    // a handled id, so handled ids are kept the longest).
    while (entries.size >= maxEntries) {
      let soonest: string | undefined;
      let soonestAt = Number.POSITIVE_INFINITY;
      for (const [key, entry] of entries) {
        if (entry.expiresAt < soonestAt || soonest === undefined) {
          soonest = key;
          soonestAt = entry.expiresAt;
        }
      }
      if (soonest === undefined) return;
      entries.delete(soonest);
    }
  };

  const write = (key: string, value: string, ttlMs: number | undefined) => {
    if (!entries.has(key)) evictIfFull();
    entries.set(key, { value, expiresAt: ttlMs === undefined ? Number.POSITIVE_INFINITY : now() + ttlMs });
  };

  const lockKey = (key: string) => `lock\u0000${key}`;

  return {
    async setIfAbsent(key, value, ttlMs) {
      if (live(key)) return false;
      write(key, value, ttlMs);
      return true;
    },
    async get(key) {
      return live(key)?.value;
    },
    async set(key, value, ttlMs) {
      write(key, value, ttlMs);
    },
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

    async acquireLock(key, ttlMs) {
      const k = lockKey(key);
      if (live(k)) return undefined;
      const lock: StoreLock = { key, token: nanoid() };
      write(k, lock.token, ttlMs);
      return lock;
    },
    async renewLock(lock, ttlMs) {
      const k = lockKey(lock.key);
      if (live(k)?.value !== lock.token) return false;
      write(k, lock.token, ttlMs);
      return true;
    },
    async releaseLock(lock) {
      const k = lockKey(lock.key);
      if (live(k)?.value !== lock.token) return false;
      entries.delete(k);
      return true;
    },

    async enqueue(key, member, score, ttlMs) {
      let queue = queues.get(key);
      if (!queue || queue.expiresAt <= now()) {
        queue = { members: new Map(), expiresAt: 0 };
        queues.set(key, queue);
      }
      queue.members.set(member, score);
      queue.expiresAt = now() + ttlMs;
    },
    async takeQueued(key) {
      const queue = queues.get(key);
      queues.delete(key);
      if (!queue || queue.expiresAt <= now()) return [];
      return [...queue.members].sort((a, b) => a[1] - b[1]).map(([member]) => member);
    },

    async publish(channel, message) {
      // Delivered after the publisher's turn, as a network store would deliver it.
      for (const listener of channels.get(channel) ?? []) queueMicrotask(() => listener(message));
    },
    async subscribe(channel, onMessage): Promise<Unsubscribe> {
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
  };
}
