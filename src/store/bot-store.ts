// The one state interface of a bot. Every runtime feature keeps its state here: webhook dedupe,
// per-conversation locks and pending queues, reply leases and attempt counters, sessions, and the
// signal that interrupts a handler held by another instance. The memory store is the default; a
// shared store (agent-messaging/redis) makes the same guarantees hold across processes.
//
// Each method is one atomic step, so a Redis implementation is one command or one Lua script each:
//   setIfAbsent -> SET NX PX        compareAndSet -> Lua GET/compare/SET|DEL
//   acquireLock -> SET NX PX token  renewLock / releaseLock -> Lua, token-checked
//   enqueue -> ZADD (+PEXPIRE)      readQueued -> Lua ZREM (the settled) + ZRANGE (the rest, kept)
//   increment -> INCR (+PEXPIRE)    publish / subscribe -> PUBLISH / SUBSCRIBE
// and two compound steps, one Lua script each, for a delivery's admit and settle (compound.ts; a custom
// store may compose them from the primitives with composeAdmit and composeSettle):
//   admit  -> claim + enqueue + try the lock (+ take)    settle -> mark done + take | release + publish

import type { AdmitRequest, AdmitResult, SettleRequest, SettleResult } from './compound.js';

/** A held lock: only the holder of `token` may renew or release it. */
export interface StoreLock {
  /** The locked key. */
  readonly key: string;
  /** The owner token, unique to this acquisition. */
  readonly token: string;
}

/**
 * How often a lock, claim or lease of `ttlMs` is renewed while held: every second, or every third of
 * the TTL when that is shorter. Several tries fit in the TTL, so a store pause or a stall that holds
 * up renewals for a few seconds (3.5 s of a bot's default 4.5 s TTL) is ridden out. @internal
 */
export const renewalEveryMs = (ttlMs: number) => Math.max(1, Math.floor(Math.min(ttlMs / 3, 1000)));

/**
 * What a delivery's store step (`admit`, `settle`) answers: the value itself when the store has it at
 * once (the memory store), or a promise of it (a network store). The runtime awaits only what is
 * pending, so a delivery on the memory store waits for no turn of the event loop in its store steps.
 */
export type StoreAnswer<T> = T | Promise<T>;

/** Stops a {@link BotStore.subscribe} subscription. */
export type Unsubscribe = () => Promise<void>;

/**
 * The state a bot keeps. Keys are plain strings chosen by the runtime (the store adds its own prefix);
 * values are strings (JSON where structured). Every TTL is in milliseconds; a key past its TTL is gone.
 * `admit` and `settle` may answer at once or with a promise ({@link StoreAnswer}): call them with `await`.
 *
 * @example
 * const bot = createBot({ apiKey, webhookSecret, store: createMemoryStore() });
 */
export interface BotStore {
  /** Sets `key` only when it is absent; `true` when this call set it. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** The value of `key`, or `undefined`. */
  get(key: string): Promise<string | undefined>;
  /** Sets `key`, with a TTL when given (without one the key does not expire). */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /**
   * Replaces the value only when it is still `expected` (`undefined`: the key is absent); `next`
   * `undefined` deletes it. `true` when it swapped. Sessions and dedupe release are built on this.
   */
  compareAndSet(
    key: string,
    expected: string | undefined,
    next: string | undefined,
    ttlMs?: number,
  ): Promise<boolean>;
  /** Deletes `key`. */
  delete(key: string): Promise<void>;
  /** Adds 1 to a counter (absent counts as 0), sets its TTL, and answers the new value. */
  increment(key: string, ttlMs: number): Promise<number>;

  /** Takes the lock on `key` for `ttlMs` when no one holds it; `undefined` when someone does. */
  acquireLock(key: string, ttlMs: number): Promise<StoreLock | undefined>;
  /** Extends a held lock to `ttlMs` from now; `false` when it was lost (expired or taken by another). */
  renewLock(lock: StoreLock, ttlMs: number): Promise<boolean>;
  /** Releases a held lock; `false` when it was no longer this holder's. */
  releaseLock(lock: StoreLock): Promise<boolean>;

  /** Adds `member` to the queue at `key`, ordered by `score` (a member already there keeps one entry). */
  enqueue(key: string, member: string, score: number, ttlMs: number): Promise<void>;
  /**
   * Removes the members in `settled` from the queue at `key`, then answers every member left, lowest
   * score first, without removing them: a message stays queued until its holder settled it, so a
   * holder that dies mid-handler leaves it (and the rest) to the next holder, in order.
   */
  readQueued(key: string, settled?: readonly string[]): Promise<string[]>;

  /** Sends `message` to every subscriber of `channel`, in this process and in others sharing the store. */
  publish(channel: string, message: string): Promise<void>;
  /** Calls `onMessage` for each message published to `channel` from now on. */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe>;

  /**
   * One step: claims `claim` (set if absent), then queues the member, then tries the lock, and when it
   * won reads the queue (up to `limit` members). Atomic in the stores of this package; `composeAdmit`
   * builds it from the primitives above for a custom store.
   */
  admit(request: AdmitRequest): StoreAnswer<AdmitResult>;
  /**
   * One step: writes the marks, then, while `lock` is still the caller's, takes the queue or (empty)
   * releases the lock and publishes the release. Atomic in the stores of this package; `composeSettle`
   * builds it from the primitives above for a custom store.
   */
  settle(request: SettleRequest): StoreAnswer<SettleResult>;
}
