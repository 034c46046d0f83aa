// Exactly one writer per reply key (issue 11, outcome 3). Invariants, for any ledger:
// - a key's lease is held by at most one writer at a time; a writer renews it while it writes, and a
//   writer that died loses it when its TTL passes;
// - a key's attempt number only grows; attempt n writes under its own Idempotency-Key, so a message
//   given up (cut short and marked, or left streaming by a dead writer) is never written again.
// The default ledger lives in this process; one over a shared BotStore (Redis) holds across processes.
import { ConflictError } from '../core/api-error.js';
import { idempotencyKeyFor } from '../core/idempotency.js';
import { sleep } from '../core/retry.js';
import { createMemoryStore } from '../store/memory-store.js';
import { type ReplyLedger, storeLedger } from './store-ledger.js';

let ledgerOfProcess: ReplyLedger | undefined;

/** The ledger of this process, over a memory store, used when a reply is given none. @internal */
export function defaultLedger(): ReplyLedger {
  // The clock read at each call, so a test that fakes Date after the first reply moves it too.
  ledgerOfProcess ??= storeLedger(createMemoryStore({ now: () => Date.now() }));
  return ledgerOfProcess;
}

/** The lease a writer holds while it writes. @internal */
export interface HeldReply {
  /** The Idempotency-Key of this attempt's message. */
  readonly messageKey: string;
  /** Gives up this attempt (the reply was cut, or its message was a dead writer's); answers the next key. */
  giveUp(): Promise<string>;
  /** Calls `listener` once if the lease is lost while held (expired, or taken after a stall). */
  onLost(listener: () => void): void;
  /** Renews the lease now: false when it was lost (checked before a step another writer may also take). */
  stillHeld(): Promise<boolean>;
  /** Stops renewing and releases; safe to call twice. */
  release(): Promise<void>;
}

/** How a writer takes a key. @internal */
export interface HoldOptions {
  ledger: ReplyLedger;
  ttlMs: number;
  /** How long to wait for another writer of the key to finish before a ConflictError. */
  waitMs: number;
  signal: AbortSignal | undefined;
}

// How often a waiting writer looks again; a store offers no wake-up on release.
const POLL_MS = 25;

/**
 * Takes the lease on `key`, waiting up to `waitMs` for its holder, and renews it every third of its
 * TTL until released. Throws a ConflictError when the key stays held.
 * @internal
 */
export async function holdReply(key: string, options: HoldOptions): Promise<HeldReply> {
  const { ledger, ttlMs, waitMs, signal } = options;
  const deadline = performance.now() + waitMs;
  let lease = await ledger.acquire(key, ttlMs);
  while (lease === undefined) {
    if (performance.now() >= deadline) {
      throw new ConflictError({
        status: 409,
        code: 'reply_in_progress',
        message: `another writer holds reply ${key} and did not finish within ${waitMs} ms (writerWaitMs)`,
      });
    }
    await sleep(POLL_MS, signal);
    lease = await ledger.acquire(key, ttlMs);
  }
  const held = lease;
  let attempt = await ledger.attempt(key);
  const keyOf = (n: number) => (n === 1 ? key : idempotencyKeyFor(key, `attempt-${n}`));
  const lost: (() => void)[] = [];
  let released = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const renew = () => {
    timer = setTimeout(async () => {
      const kept = await ledger.renew(held, ttlMs).catch(() => false);
      if (released) return;
      if (kept) renew();
      else for (const listener of lost.splice(0)) listener();
    }, ttlMs / 3);
    timer.unref?.();
  };
  renew();
  return {
    get messageKey() {
      return keyOf(attempt);
    },
    giveUp: async () => {
      await ledger.giveUp(key);
      attempt = await ledger.attempt(key);
      return keyOf(attempt);
    },
    onLost: (listener) => {
      lost.push(listener);
    },
    stillHeld: () => ledger.renew(held, ttlMs),
    release: async () => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      await ledger.release(held);
    },
  };
}
