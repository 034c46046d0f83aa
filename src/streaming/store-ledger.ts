// The ledger of reply writers: where they take a key's lease and count its attempts, over a BotStore.
import type { BotStore, StoreLock } from '../store/bot-store.js';

/**
 * Where reply writers coordinate: a lease per key and an attempt counter per key.
 *
 * @example
 * const ledger = storeLedger(createRedisStore({ client }));
 * await client.messages.reply(cnv, chunks, { eventId, ledger });
 */
export interface ReplyLedger {
  /** Takes the lease on `key` for `ttlMs`; undefined when another writer holds it. */
  acquire(key: string, ttlMs: number): Promise<StoreLock | undefined>;
  /** Extends a held lease to `ttlMs` from now; false when it was lost. */
  renew(lease: StoreLock, ttlMs: number): Promise<boolean>;
  /** Releases a held lease. */
  release(lease: StoreLock): Promise<void>;
  /** The attempt the next writer of `key` makes: 1 until one was given up. */
  attempt(key: string): Promise<number>;
  /** Gives up the current attempt of `key`: the next writer writes a new message. */
  giveUp(key: string): Promise<void>;
}

/** How long an attempt counter is kept: longer than any delivery retry schedule. @internal */
export const ATTEMPT_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * A ledger over a {@link BotStore}: leases are the store's locks, attempts its counters. Over a shared
 * store, two processes writing the same reply key never interleave either.
 */
export function storeLedger(store: BotStore): ReplyLedger {
  return {
    acquire: (key, ttlMs) => store.acquireLock(`reply-lease:${key}`, ttlMs),
    renew: (lease, ttlMs) => store.renewLock(lease, ttlMs),
    release: async (lease) => {
      await store.releaseLock(lease);
    },
    attempt: async (key) => 1 + Number((await store.get(`reply-attempt:${key}`)) ?? 0),
    giveUp: async (key) => {
      await store.increment(`reply-attempt:${key}`, ATTEMPT_TTL_MS);
    },
  };
}
