// Locks in this process's memory, each held until released or until its time passed: the memory
// store's locks and the reply writers' leases of a reply given no ledger (process-ledger.ts). A module
// of its own with nothing else in it, so the streaming side can use it without bringing the memory
// store up front in a bundler that splits by module (esbuild, bench/bundle-size.mjs).
import type { StoreLock } from './bot-store.js';

interface Timed<V> {
  value: V;
  /** Epoch ms after which the entry is gone. */
  expiresAt: number;
}

/**
 * A map whose entries are gone once their time passed. A new key in a map of `sweepAt` entries or
 * more first forgets the expired ones: entries that are never read again still go.
 * @internal
 */
export function expiringMap<V>(sweepAt: number, now: () => number) {
  const entries = new Map<string, Timed<V>>();
  return {
    /** The entry of `key` while its time has not passed. */
    live(key: string): Timed<V> | undefined {
      const entry = entries.get(key);
      if (entry !== undefined && entry.expiresAt <= now()) {
        entries.delete(key);
        return undefined;
      }
      return entry;
    },
    set(key: string, value: V, ttlMs: number): void {
      if (entries.size >= sweepAt && !entries.has(key)) {
        const at = now();
        for (const [other, entry] of entries) if (entry.expiresAt <= at) entries.delete(other);
      }
      entries.set(key, { value, expiresAt: now() + ttlMs });
    },
    delete: (key: string) => entries.delete(key),
  };
}

/**
 * Token-checked locks in this process: `acquire` answers a lock unless one is held, `renew` and
 * `release` act only for the token that holds it. Tokens (`prefix` and a counter) only need to be
 * unique within the table.
 * @internal
 */
export function localLocks(sweepAt: number, now: () => number, prefix: string) {
  const held = expiringMap<string>(sweepAt, now);
  let tokens = 0;
  const holds = (lock: StoreLock) => held.live(lock.key)?.value === lock.token;
  return {
    holds,
    acquire(key: string, ttlMs: number): StoreLock | undefined {
      if (held.live(key) !== undefined) return undefined;
      const lock: StoreLock = { key, token: `${prefix}${++tokens}` };
      held.set(key, lock.token, ttlMs);
      return lock;
    },
    renew(lock: StoreLock, ttlMs: number): boolean {
      if (!holds(lock)) return false;
      held.set(lock.key, lock.token, ttlMs);
      return true;
    },
    release(lock: StoreLock): boolean {
      if (!holds(lock)) return false;
      held.delete(lock.key);
      return true;
    },
  };
}
