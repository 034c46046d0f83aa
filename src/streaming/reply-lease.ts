// Exactly one writer per reply key (issue 11, outcome 3). Invariants, for any store:
// - a key's lease is held by at most one writer at a time; a writer renews it while it writes, and a
//   writer that died loses it when its TTL passes;
// - a writer whose process stalled past its renewal checks the lease before it writes again: another
//   writer may hold the key by then;
// - a renewal that fails with an error (a store hiccup, not an answer that the lease is gone) is tried
//   again while the lease's TTL still runs: only a lease the store says is gone, or one the TTL ran
//   out on, is lost;
// - a key's attempt number only grows; attempt n writes under its own Idempotency-Key, so a message
//   given up (cut short and marked, or left streaming by a dead writer) is never written again.
// The default store lives in this process; a shared BotStore (Redis) holds across processes. A key's
// lease is the store's lock `reply-lease:{key}`, its attempts given up the counter `reply-attempt:{key}`.
import { ConflictError } from '../core/api-error.js';
import { idempotencyKeyFor } from '../core/idempotency.js';
import { sleep } from '../core/retry.js';
import { type BotStore, renewalEveryMs } from '../store/bot-store.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { CheckedReplyOptions } from './options.js';

let storeOfProcess: BotStore | undefined;

/** The memory store of this process, where a reply given no `ledger` keeps its lease. @internal */
export function defaultLedger(): BotStore {
  // The clock read at each call, so a test that fakes Date after the first reply moves it too.
  storeOfProcess ??= createMemoryStore({ now: () => Date.now() });
  return storeOfProcess;
}

/** How long an attempt counter is kept: longer than any delivery retry schedule. */
const ATTEMPT_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** The lease a writer holds while it writes. @internal */
export type HeldReply = Awaited<ReturnType<typeof holdReply>>;

/** The failure of a writer whose lease another writer may hold now: it writes nothing more. @internal */
export const leaseLost = (
  reply: string,
  why = '(not renewed within writerLeaseMs, or taken by another writer); this writer sends nothing more',
) =>
  new ConflictError({
    status: 409,
    code: 'reply_lease_lost',
    message: `reply ${reply} lost its writer's lease ${why}`,
  });

// How often a waiting writer looks again; a store offers no wake-up on release.
const POLL_MS = 25;

// The longest pause between tries of a renewal that failed with an error (a tenth of the TTL if less).
const RENEW_RETRY_MS = 1_000;

/**
 * Takes the lease on `key`, waiting up to `writerWaitMs` for its holder, and renews it every second (every
 * third of its TTL when shorter) until released, as a bot's conversation locks are. Throws a
 * ConflictError when the key stays held.
 * @internal
 */
export async function holdReply(key: string, checked: CheckedReplyOptions) {
  const { ledger, writerLeaseMs: ttlMs, writerWaitMs: waitMs } = checked;
  const { signal } = checked.request;
  const deadline = performance.now() + waitMs;
  const [leaseKey, attemptKey] = [`reply-lease:${key}`, `reply-attempt:${key}`];
  // When the lease was last known held (epoch ms, the clock a store's TTL runs on): taken no
  // earlier than the call that took it began.
  let confirmedAt = Date.now();
  let held = await ledger.acquireLock(leaseKey, ttlMs);
  while (held === undefined) {
    if (performance.now() >= deadline) {
      throw new ConflictError({
        status: 409,
        code: 'reply_in_progress',
        message: `another writer holds reply ${key} and did not finish within ${waitMs} ms (writerWaitMs)`,
      });
    }
    await sleep(POLL_MS, signal);
    confirmedAt = Date.now();
    held = await ledger.acquireLock(leaseKey, ttlMs);
  }
  let attempt = 1 + Number((await ledger.get(attemptKey)) ?? 0);
  const keyOf = (n: number) => (n === 1 ? key : idempotencyKeyFor(key, `attempt-${n}`));
  const lost: (() => void)[] = [];
  let released = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const lose = () => {
    for (const listener of lost.splice(0)) listener();
  };
  const renewNow = async (): Promise<boolean> => {
    const pauseMs = Math.min(RENEW_RETRY_MS, ttlMs / 10);
    for (;;) {
      const asked = Date.now();
      try {
        const kept = await ledger.renewLock(held, ttlMs);
        if (kept) confirmedAt = asked;
        return kept;
      } catch {
        // No answer is not a lost lease: tried again while the TTL still covers the next try.
        if (released || Date.now() + pauseMs >= confirmedAt + ttlMs) return false;
        await sleep(pauseMs, undefined);
      }
    }
  };
  const renew = () => {
    timer = setTimeout(async () => {
      const kept = await renewNow();
      if (released) return;
      if (kept) renew();
      else lose();
    }, renewalEveryMs(ttlMs));
    timer.unref?.();
  };
  renew();
  return {
    /** The Idempotency-Key of this attempt's message. */
    get messageKey() {
      return keyOf(attempt);
    },
    /** Gives up this attempt (the reply was cut, or its message was a dead writer's); answers the next key. */
    giveUp: async () => {
      attempt = 1 + (await ledger.increment(attemptKey, ATTEMPT_TTL_MS));
      return keyOf(attempt);
    },
    /** Calls `listener` once if the lease is lost while held (expired, or taken after a stall). */
    onLost: (listener: () => void) => {
      lost.push(listener);
    },
    /**
     * Whether the lease is still this writer's, before it writes: at once while it was confirmed within
     * two thirds of its TTL, else (a stall kept the renewal from running) after renewing it; always
     * after renewing it with `renew` (before a step another writer may also take). A lease found lost
     * is reported to the `onLost` listeners.
     */
    current: async (renew = false) => {
      if (!renew && Date.now() - confirmedAt < (ttlMs * 2) / 3) return true;
      const kept = await renewNow();
      if (!kept) lose();
      return kept;
    },
    /** Stops renewing and releases; safe to call twice. */
    release: async () => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      await ledger.releaseLock(held);
    },
  };
}
