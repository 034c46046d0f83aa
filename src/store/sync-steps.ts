// The compound steps of a store that can answer them at once, in the caller's own turn: the memory
// store, whose state is this process's memory. The lanes use them for a conversation that is idle
// (nothing queued, the lock free): no promise between the admit and the handler, nor between the
// handler and its settle, and no renewal timer. A lock in this process's memory cannot be lost to a
// stalled event loop the way a shared store's TTL can, so such a holder takes the lock for its
// handler's whole lifetime (maxHandlerMs plus one TTL) instead of renewing it.
//
// Kept by identity in a WeakMap, not as a property: a store wrapped or copied (a Proxy, `{ ...store }`
// with one method replaced, as tests and custom stores do) is another object and keeps the composed
// path through its own methods, so what it overrides is always called. So does the very object once
// a method of it was replaced in place (instrumented, or made to fail in a test) before the bot was
// created: the steps are kept with the methods the store was made with, and given only while every
// one is still the same.

import type { BotStore, StoreLock } from './bot-store.js';
import type { AdmitRequest, AdmitResult, SettleRequest, SettleResult } from './compound.js';

/** The steps of {@link BotStore.admit} and {@link BotStore.settle}, answered synchronously. @internal */
export interface SyncSteps {
  /**
   * {@link BotStore.admit}, done and answered in this turn. With `idleLockTtlMs`, a conversation found
   * idle (nothing queued, the lock free) has its lock taken for `idleLockTtlMs` and the member is not
   * queued, answered as `queued: []`: its holder queues it only if it stops before settling it
   * (`enqueue`), and settles with nothing to remove.
   */
  admit(request: AdmitRequest, idleLockTtlMs?: number): AdmitResult;
  /** {@link BotStore.enqueue} in this turn. */
  enqueue(key: string, member: string, score: number, ttlMs: number): void;
  /** {@link BotStore.settle}, done and answered in this turn. */
  settle(request: SettleRequest): SettleResult;
  /** {@link BotStore.renewLock} in this turn: `lock` kept `ttlMs` from now; `false` when it is not held. */
  extend(lock: StoreLock, ttlMs: number): boolean;
  /** {@link BotStore.subscribe} in this turn; the answer unsubscribes. */
  listen(channel: string, onMessage: (message: string) => void): () => void;
  /**
   * {@link BotStore.setIfAbsent} in this turn: `undefined` once `value` was set, else the value the
   * key holds (a 'concurrent' bot's dedupe claim).
   */
  claim(key: string, value: string, ttlMs: number): string | undefined;
  /** {@link BotStore.set} in this turn (a 'concurrent' bot's done mark). */
  set(key: string, value: string, ttlMs: number): void;
}

const registry = new WeakMap<BotStore, { steps: SyncSteps; methods: [string, unknown][] }>();

/**
 * Records that `store` (this very object, with the methods it has now) answers its compound steps
 * synchronously through `steps`.
 * @internal
 */
export function registerSyncSteps<T extends BotStore>(store: T, steps: SyncSteps): T {
  registry.set(store, { steps, methods: Object.entries(store) });
  return store;
}

/**
 * The synchronous steps of `store`, when it registered some and none of its methods was replaced
 * since; `undefined` for any other store. @internal
 */
export function syncStepsOf(store: BotStore): SyncSteps | undefined {
  const registered = registry.get(store);
  if (!registered) return undefined;
  const own = store as unknown as Record<string, unknown>;
  const same = registered.methods.every(([name, method]) => own[name] === method);
  return same && Object.keys(store).length === registered.methods.length ? registered.steps : undefined;
}
