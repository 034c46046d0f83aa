// Deduplication of deliveries by webhook-id. The service retries a delivery with the same id for
// 5 s + 5 min + 30 min + 2 h + 5 h + 10 h (PROTOCOL.md section 6), about 17.6 hours, so an id is kept
// at least that long; any shorter and a late retry of a handled event would run its handler again.
// Deprecated: the bot dedupes in its BotStore (store-dedupe.ts); this stays for the `dedupe` option.

import type { BotStore } from '../store/bot-store.js';

/** What {@link DedupeStore.claim} found: the id was free (and is now taken), being handled, or handled. */
export type ClaimResult = 'claimed' | 'in_flight' | 'done';

/**
 * @deprecated Give `createBot` a `store` (a {@link BotStore}) instead; it dedupes, and also keeps locks,
 * queues and sessions. Where a bot records the webhook ids it has handled. The default is in memory, which is right for one
 * process; give a shared store (Redis, a database, Durable Objects) when several processes take deliveries.
 *
 * @example
 * // With a key-value store that has an atomic "set if absent" (Redis SET NX, a SQL unique insert, ...):
 * const store: DedupeStore = {
 *   claim: async (id) => ((await kv.setIfAbsent(id, 'in_flight')) ? 'claimed' : await kv.get(id)),
 *   complete: (id) => kv.set(id, 'done', { ttlSeconds: 18 * 3600 }),
 *   release: (id) => kv.delete(id),
 * };
 */
export interface DedupeStore {
  /** Takes the id if it is free; must be atomic across the processes that share the store. */
  claim(id: string): ClaimResult | Promise<ClaimResult>;
  /** The handler succeeded: answer later deliveries of this id as duplicates. */
  complete(id: string): void | Promise<void>;
  /** The handler failed: forget the id so the service's retry runs it again. */
  release(id: string): void | Promise<void>;
}

/** The whole retry schedule of the service (17 h 35 min 5 s) and some slack for clock skew. */
export const DEDUPE_RETENTION_MS = 18 * 60 * 60 * 1000;

/** Options of {@link createMemoryDedupeStore}. */
export interface MemoryDedupeStoreOptions {
  /** Most ids kept; past it the oldest handled id is forgotten first. 100,000 by default. */
  maxEntries?: number;
  /** How long an id is kept, in milliseconds; 18 hours by default (the retry window). */
  retentionMs?: number;
  /** The clock, in epoch milliseconds; `Date.now` by default. */
  now?: () => number;
}

interface Entry {
  state: 'in_flight' | 'done';
  at: number;
}

/**
 * @deprecated `createBot` dedupes in its `store` (`createMemoryStore()` by default).
 * A bounded in-memory {@link DedupeStore} for one process.
 *
 * @example
 * const bot = createBot({ apiKey, webhookSecret, dedupe: createMemoryDedupeStore({ maxEntries: 10_000 }) });
 */
export function createMemoryDedupeStore(options: MemoryDedupeStoreOptions = {}): DedupeStore {
  const { maxEntries = 100_000, retentionMs = DEDUPE_RETENTION_MS, now = Date.now } = options;
  // Insertion order is age order: every write deletes and re-inserts, so the oldest entry comes first.
  const entries = new Map<string, Entry>();

  const write = (id: string, state: Entry['state']) => {
    entries.delete(id);
    entries.set(id, { state, at: now() });
  };

  const expire = () => {
    const cutoff = now() - retentionMs;
    for (const [id, entry] of entries) {
      if (entry.at > cutoff) break;
      entries.delete(id);
    }
  };

  const evict = () => {
    // Forget a handled id before one in flight: dropping an in-flight id could run a handler twice at once.
    let oldest: string | undefined;
    for (const [id, entry] of entries) {
      oldest ??= id;
      if (entry.state === 'done') return void entries.delete(id);
    }
    if (oldest !== undefined) entries.delete(oldest);
  };

  return {
    claim(id) {
      expire();
      const existing = entries.get(id);
      if (existing) return existing.state;
      if (entries.size >= maxEntries) evict();
      write(id, 'in_flight');
      return 'claimed';
    },
    complete(id) {
      write(id, 'done');
      if (entries.size > maxEntries) evict();
    },
    release(id) {
      entries.delete(id);
    },
  };
}
