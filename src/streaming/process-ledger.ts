// The ledger a reply uses when it is given none: leases and attempt counters of this process, in two
// maps. Not a memory store (createMemoryStore) under storeLedger: the main entry exports
// createMemoryStore, and the streaming side using it would bring the whole store up front with
// `import { AgentClient }` in a bundler that splits by module (esbuild, bench/bundle-size.mjs).
import type { StoreLock } from '../store/bot-store.js';
import type { ReplyLedger } from './store-ledger.js';

// Attempt counters outlive any delivery retry schedule (as storeLedger keeps them).
const ATTEMPT_TTL_MS = 7 * 24 * 60 * 60 * 1000;
// Counters are written only when a reply is given up; past this many, the expired ones go.
const SWEEP_AT = 10_000;

interface Timed {
  value: string | number;
  expiresAt: number;
}

/** A map whose entries are gone once their time passed. */
function timedMap() {
  const entries = new Map<string, Timed>();
  const live = (key: string) => {
    const entry = entries.get(key);
    if (entry !== undefined && entry.expiresAt <= Date.now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };
  const set = (key: string, value: string | number, ttlMs: number) => {
    if (entries.size >= SWEEP_AT && !entries.has(key)) {
      for (const [other, entry] of entries) if (entry.expiresAt <= Date.now()) entries.delete(other);
    }
    entries.set(key, { value, expiresAt: Date.now() + ttlMs });
  };
  return { live, set, delete: (key: string) => entries.delete(key) };
}

/** A new ledger of this process: a writer's lease is its key's entry until released or expired. @internal */
export function processLedger(): ReplyLedger {
  const leases = timedMap();
  const attempts = timedMap();
  // Tokens only need to be unique in this process.
  let tokens = 0;
  const holds = (lease: StoreLock) => leases.live(lease.key)?.value === lease.token;
  return {
    acquire: async (key, ttlMs) => {
      if (leases.live(key) !== undefined) return undefined;
      const lease: StoreLock = { key, token: `p${++tokens}` };
      leases.set(key, lease.token, ttlMs);
      return lease;
    },
    renew: async (lease, ttlMs) => {
      if (!holds(lease)) return false;
      leases.set(lease.key, lease.token, ttlMs);
      return true;
    },
    release: async (lease) => {
      if (holds(lease)) leases.delete(lease.key);
    },
    attempt: async (key) => 1 + Number(attempts.live(key)?.value ?? 0),
    giveUp: async (key) => {
      attempts.set(key, Number(attempts.live(key)?.value ?? 0) + 1, ATTEMPT_TTL_MS);
    },
  };
}
