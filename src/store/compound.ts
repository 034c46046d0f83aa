// The two compound steps of a delivery. A delivery to an idle conversation costs
// the store one `admit` (claim the webhook id, queue the message, try the lock, read the queue) and
// one `settle` (mark what was handled done, remove it from the queue, then read the rest or release
// the lock), so a shared store answers it in two round trips instead of eight. Every store has both:
// the memory and Redis stores do each as one atomic step (one Lua script on Redis); a custom store
// may build them with `composeAdmit` and `composeSettle`, the same steps one primitive call each.
// The runtime always calls the store's own two steps: there is no second path for a store without.
//
// Why one step each is safe (Chat SDK's two lost-message bugs): `admit` queues before it tries the
// lock, and `settle` releases only when its read found the queue empty, so a message queued by
// another instance is either read by the holder's settle or finds the lock free in its own admit.
// A message leaves the queue only in the settle that marks it done (or with a later settle), so a
// holder that dies mid-handler leaves it queued for the next holder.

import type { BotStore, StoreLock } from './bot-store.js';

/** What {@link BotStore.admit} does, in this order, as one step. */
export interface AdmitRequest {
  /** Set `key` to `value` for `ttlMs` only when it is absent (the dedupe claim); omitted: no claim. */
  readonly claim?: { readonly key: string; readonly value: string; readonly ttlMs: number };
  /** Then (claim won) add `member` to the queue at `key`, as {@link BotStore.enqueue} does. */
  readonly queue: {
    readonly key: string;
    readonly member: string;
    readonly score: number;
    readonly ttlMs: number;
  };
  /** Then try the lock on `key` for `ttlMs`, as {@link BotStore.acquireLock} does. */
  readonly lock: { readonly key: string; readonly ttlMs: number };
  /**
   * When the lock was won, read at most this many members, lowest score first; omitted: all. A
   * holder that runs one message at a time reads only the head, so what a read costs does not grow
   * with the backlog.
   */
  readonly limit?: number;
  /**
   * When the lock was won, the value of this key is answered too (`value`), as {@link BotStore.get}
   * reads it: what the new holder reads first (its conversation's order record) costs no round trip
   * of its own.
   */
  readonly read?: string;
}

/**
 * What {@link BotStore.admit} did: the claim was refused (nothing queued; `current` is the claim's
 * value, `undefined` only if it vanished meanwhile), or the member is queued and the lock was won
 * (`queued`: the queue read as {@link BotStore.readQueued} reads it, up to `limit` members; `value`:
 * the value of `read`, when asked) or is held by someone else.
 */
export type AdmitResult =
  | { readonly claimed: false; readonly current: string | undefined }
  | {
      readonly claimed: true;
      readonly lock: StoreLock;
      readonly queued: string[];
      readonly value?: string | undefined;
    }
  | { readonly claimed: true; readonly lock: undefined };

/** What {@link BotStore.settle} does, in this order, as one step. */
export interface SettleRequest {
  /** The held lock. */
  readonly lock: StoreLock;
  /** The lock's TTL: a settle that leaves the lock held extends it to this from now. */
  readonly lockTtlMs: number;
  /**
   * The queue's TTL: a settle that reads members left extends the queue to this from now, so a
   * backlog its holder works through outlives the TTL its last enqueue gave it. Omitted: unchanged
   * (`composeSettle` cannot extend it with the primitives).
   */
  readonly queueTtlMs?: number;
  /** Written first, whoever holds the lock now (the handled ids marked done): `set` with a TTL. */
  readonly marks: readonly { readonly key: string; readonly value: string; readonly ttlMs: number }[];
  /** Then, while the lock is still this token's: these members removed from the queue at `queue`... */
  readonly settled: readonly string[];
  /** ...and the queue read (at most `limit` members, lowest score first; omitted: all); if it is empty, the lock released. */
  readonly queue: string;
  /** The most members the read answers, as {@link AdmitRequest.limit}. */
  readonly limit?: number;
  /** Published once the lock was released here. */
  readonly released: { readonly channel: string; readonly message: string };
}

/**
 * What {@link BotStore.settle} did: read a non-empty queue (`queued`, the lock kept), released the
 * lock (the queue was empty; the release published), or found the lock no longer this token's (only
 * the marks written: queue and lock left to the new holder).
 */
export type SettleResult =
  | { readonly outcome: 'queued'; readonly queued: string[] }
  | { readonly outcome: 'released' }
  | { readonly outcome: 'lost' };

/**
 * Sets `claim` only when it is absent: claimed, or refused with the value it holds (`undefined` only
 * if it vanished twice). A claim that vanishes between `setIfAbsent` and `get` is tried once more.
 * @internal
 */
export async function claimOnce(
  store: StorePrimitives,
  claim: NonNullable<AdmitRequest['claim']>,
): Promise<{ claimed: true } | { claimed: false; current: string | undefined }> {
  if (await store.setIfAbsent(claim.key, claim.value, claim.ttlMs)) return { claimed: true };
  const current = await store.get(claim.key);
  if (current === undefined && (await store.setIfAbsent(claim.key, claim.value, claim.ttlMs))) {
    return { claimed: true };
  }
  return { claimed: false, current };
}

/** The first `limit` members read (all without one). @internal */
export const head = (members: string[], limit: number | undefined) =>
  limit === undefined ? members : members.slice(0, limit);

/** The steps of a {@link BotStore} that `composeAdmit` and `composeSettle` build on. */
export type StorePrimitives = Omit<BotStore, 'admit' | 'settle'>;

/**
 * {@link BotStore.admit} from the store's primitives, one call each, for a custom store with no atomic
 * step of its own (not atomic: a claim that vanishes between `setIfAbsent` and `get` is tried once more).
 *
 * @example
 * const store: BotStore = { ...primitives, admit: (r) => composeAdmit(primitives, r), settle: (r) => composeSettle(primitives, r) };
 */
export async function composeAdmit(store: StorePrimitives, request: AdmitRequest): Promise<AdmitResult> {
  const { claim, queue, lock } = request;
  if (claim) {
    const taken = await claimOnce(store, claim);
    if (!taken.claimed) return taken;
  }
  await store.enqueue(queue.key, queue.member, queue.score, queue.ttlMs);
  const held = await store.acquireLock(lock.key, lock.ttlMs);
  if (!held) return { claimed: true, lock: undefined };
  const queued = head(await store.readQueued(queue.key), request.limit);
  if (request.read === undefined) return { claimed: true, lock: held, queued };
  return { claimed: true, lock: held, queued, value: await store.get(request.read) };
}

/**
 * {@link BotStore.settle} from the store's primitives, one call each, for a custom store with no atomic
 * step of its own (not atomic: the lock is checked by a renewal just before the read, so a lock lost in
 * between goes unseen).
 */
export async function composeSettle(store: StorePrimitives, request: SettleRequest): Promise<SettleResult> {
  for (const mark of request.marks) await store.set(mark.key, mark.value, mark.ttlMs);
  if (!(await store.renewLock(request.lock, request.lockTtlMs))) return { outcome: 'lost' };
  const queued = head(await store.readQueued(request.queue, request.settled), request.limit);
  if (queued.length > 0) return { outcome: 'queued', queued };
  if (!(await store.releaseLock(request.lock))) return { outcome: 'lost' };
  await store.publish(request.released.channel, request.released.message);
  return { outcome: 'released' };
}
