// The ledger a reply uses when it is given none: leases and attempt counters of this process, made of
// the local locks and expiring map the memory store's locks are made of. Not a memory store under
// storeLedger: the main entry exports createMemoryStore, and the streaming side using it would bring the whole store up front with
// `import { AgentClient }` in a bundler that splits by module (esbuild, bench/bundle-size.mjs).
import { expiringMap, localLocks } from '../store/local-locks.js';
import { ATTEMPT_TTL_MS, type ReplyLedger } from './store-ledger.js';

// Past this many entries, a new one first forgets the expired ones.
const SWEEP_AT = 10_000;

/** A new ledger of this process: a writer's lease is its key's lock until released or expired. @internal */
export function processLedger(): ReplyLedger {
  // The clock read at each call (Date.now as it is then), as the ledger always did.
  const now = () => Date.now();
  const leases = localLocks(SWEEP_AT, now, 'p');
  const attempts = expiringMap<number>(SWEEP_AT, now);
  return {
    acquire: async (key, ttlMs) => leases.acquire(key, ttlMs),
    renew: async (lease, ttlMs) => leases.renew(lease, ttlMs),
    release: async (lease) => {
      leases.release(lease);
    },
    attempt: async (key) => 1 + (attempts.live(key)?.value ?? 0),
    giveUp: async (key) => {
      attempts.set(key, (attempts.live(key)?.value ?? 0) + 1, ATTEMPT_TTL_MS);
    },
  };
}
