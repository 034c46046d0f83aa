// Per-conversation order over the bot store, for the 'queue', 'interrupt' and 'debounce' policies.
//
// The steps of a delivery: claim (dedupe), enqueue, acquire the lock, read the queue, run, complete,
// read again (removing what was settled) or release. A delivery is claimed, then put in its
// conversation's queue in the store (ordered by `sequence`), and only then does anyone try the
// conversation's lock, so no claimed message can be lost by a failed lock attempt (Chat SDK's first
// bug). Whoever holds the lock reads the queue and handles all of it in order (never "the latest
// plus skipped"), and a message leaves the queue only once it was settled (done, or failed for the
// service's retry): a holder killed mid-handler leaves its message, and the ones after it, queued for
// the next holder, who runs them first, in order. The holder releases only after a read found the
// queue empty. A delivery that found the lock held waits for the release (in process, through the
// store's publish/subscribe, and by polling for a holder that died) and then tries the lock itself:
// so a message queued between the holder's last read and its release is never stranded (Chat SDK's
// second bug), whatever instance queued it.
//
// The fast path folds those steps into two store calls (src/store/compound.ts): `admit` (claim,
// enqueue, acquire, read) and `settle` (the done marks of what ran, its removal from the queue, then
// the next read or, when empty, the release), one round trip each on a store that has them.

import type { BotStore, StoreLock } from '../store/bot-store.js';
import { admitWith, settleWith } from '../store/compound.js';
import { type BatchOutcome, type QueuedItem, type StopReason, stopError } from './batch.js';
import { holdLock } from './lock-hold.js';
import { createReleaseWaiters, type ReleaseWait } from './release-waiters.js';
import type { Deduper, DedupeWrite } from './store-dedupe.js';

/** The conversation policies that use the lock. */
export type LanePolicy = 'queue' | 'interrupt' | 'debounce';

/**
 * A delivery's fate: its batch's outcome (also when another instance ran it, as its dedupe record
 * says), or `'elsewhere'` when another instance ran it and the outcome cannot be known (the
 * deprecated `dedupe` option, which cannot tell).
 */
export type LaneOutcome = BatchOutcome | 'elsewhere';

/** A delivery admitted to its lane: its claim refused, or claimed and being handled (`work`). */
export type Admission = { claim: 'in_flight' | 'done' } | { claim: 'claimed'; work: Promise<LaneOutcome> };

/** What the lanes need. @internal */
export interface LaneOptions {
  store: BotStore;
  policy: LanePolicy;
  lockTtlMs: number;
  maxHandlerMs: number;
  debounceMs: number;
  /** Runs one batch and settles its dedupe (with `deferDone`, all but the done marks); never throws. */
  runBatch(
    items: QueuedItem[],
    signal: AbortSignal,
    stopped: () => StopReason | undefined,
    deferDone: boolean,
  ): Promise<BatchOutcome>;
  report(error: unknown): void;
  /**
   * The bot's dedupe: where a delivery's claim stands (`state`), keeping claims alive (`hold`), and
   * its claim and done mark as store writes (`writes`) for the lanes to fold into admit and settle.
   */
  dedupe: Pick<Deduper, 'state' | 'hold' | 'writes'>;
}

// A queued item outlives any wait for the lock: the longest handler plus a lock's expiry.
const queueTtl = (o: LaneOptions) => o.maxHandlerMs + 2 * o.lockTtlMs + o.debounceMs;
const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    (timer as { unref?: () => void }).unref?.();
  });

/** The lanes of one bot: `submit` resolves once the delivery's message was handled. @internal */
export function createLanes(options: LaneOptions) {
  const { store, policy, dedupe } = options;
  const waiting = new Map<string, (outcome: BatchOutcome) => void>();
  // The members this process queued and still waits on: a holder here reads them back unparsed.
  const local = new Map<string, QueuedItem>();
  const { notifyReleased, nextRelease } = createReleaseWaiters();
  const queueKey = (conversationId: string) => `queue:${conversationId}`;
  const lockKey = (conversationId: string) => `conversation:${conversationId}`;
  // Done marks go with the settle when the dedupe lives in the bot's own store.
  const deferDone = dedupe.writes !== undefined;

  /**
   * The queued members to run now, parsed, without those already done: a holder that completed them
   * died before removing them, or a retry queued one again after it was done, or this holder handled
   * its id already (`ran`). `fresh` is the caller's own member when no other holder can have run it yet,
   * which needs no look. Skipped members go to `settled`, to be removed by the next read.
   */
  const runnable = async (
    members: string[],
    fresh: string | undefined,
    ran: ReadonlySet<string>,
    settled: string[],
  ) => {
    const batch: { member: string; item: QueuedItem }[] = [];
    for (const member of members) {
      const item = local.get(member) ?? (JSON.parse(member) as QueuedItem);
      const id = item.webhookId;
      if (ran.has(id) || (member !== fresh && (await dedupe.state?.(id)) === 'done')) {
        settled.push(member);
        if (!ran.has(id)) waiting.get(id)?.('ok');
      } else batch.push({ member, item });
    }
    return batch;
  };

  /**
   * Holds the lock and handles the queue until a read finds it empty (`'drained'`, the lock released
   * in that same step); `'busy'` when someone else holds the lock, `'stopped'` when the lock was lost
   * or the store failed mid-way (what was not settled stays queued for the next holder). `admitted`:
   * the lock and the read an `admit` already made.
   */
  const drain = async (
    conversationId: string,
    fresh: { member: string; until: number } | undefined,
    admitted?: { lock: StoreLock; queued: string[] },
  ): Promise<'drained' | 'busy' | 'stopped'> => {
    const lock = admitted?.lock ?? (await store.acquireLock(lockKey(conversationId), options.lockTtlMs));
    if (!lock) return 'busy';
    // No other holder that read the caller's delivery can have let its lock expire before now.
    const freshMember = fresh && Date.now() < fresh.until ? fresh.member : undefined;
    const ran = new Set<string>();
    let running: { controller: AbortController; sequence: number } | undefined;
    let stop: StopReason | undefined;
    const abort = (reason: StopReason) => {
      if (!running || running.controller.signal.aborted) return;
      stop = reason;
      running.controller.abort(stopError(reason));
    };
    const hold = holdLock(store, lock, {
      ttlMs: options.lockTtlMs,
      maxMs: options.maxHandlerMs,
      onLoss: (loss) => abort(loss),
    });
    let unsubscribe: (() => Promise<void>) | undefined;
    let result: 'drained' | 'stopped' = 'stopped';
    // What the next settle records (done marks, members to remove) and the runs it answers for: a
    // delivery hears its outcome only once that outcome is in the store.
    let marks: DedupeWrite[] = [];
    let settled: string[] = [];
    let told: { items: QueuedItem[]; outcome: BatchOutcome }[] = [];
    const tell = (instead?: BatchOutcome) => {
      for (const { items, outcome } of told) {
        for (const item of items) waiting.get(item.webhookId)?.(instead ?? outcome);
      }
      told = [];
    };
    try {
      if (policy === 'interrupt') {
        unsubscribe = await store.subscribe(`interrupt:${conversationId}`, (message) => {
          if (running && Number(message) > running.sequence) abort('interrupted');
        });
      }
      let members = admitted?.queued;
      while (!hold.loss) {
        if (policy === 'debounce') {
          await sleep(options.debounceMs);
          members = undefined;
        }
        if (members === undefined) {
          const next = await settleWith(store, {
            lock,
            lockTtlMs: options.lockTtlMs,
            marks,
            settled,
            queue: queueKey(conversationId),
            released: { channel: `released:${conversationId}`, message: '' },
          });
          marks = [];
          settled = [];
          tell();
          if (next.outcome === 'released') {
            result = 'drained';
            break;
          }
          if (next.outcome === 'lost') break; // the new holder's queue and lock: not ours to touch
          members = next.queued;
        }
        // 'queue' handles the first message alone, then reads again (a retry of an earlier message
        // queued meanwhile comes next); the others hand everything queued to one run.
        const next = policy === 'queue' ? members.slice(0, 1) : members;
        const batch = await runnable(next, freshMember, ran, settled);
        members = undefined;
        if (batch.length === 0) continue;
        running = { controller: new AbortController(), sequence: sequenceOf(batch.at(-1)?.item) };
        stop = undefined;
        hold.arm();
        const items = batch.map(({ item }) => item);
        const outcome = await options.runBatch(items, running.controller.signal, () => stop, deferDone);
        hold.disarm();
        running = undefined;
        told.push({ items, outcome });
        // A failed one may come back with its retry; one that succeeded is not run again by this holder.
        if (outcome === 'ok') for (const item of items) ran.add(item.webhookId);
        // A failed store leaves the message unsettled, a lost lock leaves it queued for the next holder.
        if (outcome === 'store_failed') break;
        if (outcome === 'ok' && dedupe.writes)
          marks.push(...items.map((item) => dedupe.writes!.done(item.webhookId)));
        if (hold.loss) break;
        settled.push(...batch.map(({ member }) => member));
      }
      // Stopped after a run that succeeded (its lock lost since): its done marks still count.
      for (const mark of marks) await store.set(mark.key, mark.value, mark.ttlMs);
      tell();
    } catch (error) {
      tell('store_failed'); // whether the failed step recorded them is unknown: the retries decide
      throw error;
    } finally {
      hold.stop();
      await unsubscribe?.().catch(options.report);
      // Released (and published) by the settle that found the queue empty; a holder that stopped
      // mid-way lets its lock expire, so no one mistakes what it left queued for a fresh delivery.
      if (result === 'drained') notifyReleased(conversationId);
    }
    return result;
  };

  /**
   * Admits a delivery in one store step: its claim (unless `claimed`: the deprecated `dedupe` option
   * claimed it elsewhere), its place in the queue, a try of the lock and, when won, the read.
   */
  const admit = async (item: QueuedItem, claimed: boolean): Promise<Admission> => {
    const conversationId = item.event.conversationId;
    const member = JSON.stringify(item);
    const fresh = { member, until: Date.now() + options.lockTtlMs };
    const admitted = await admitWith(store, {
      ...(claimed || !dedupe.writes ? {} : { claim: dedupe.writes.claim(item.webhookId) }),
      queue: { key: queueKey(conversationId), member, score: sequenceOf(item), ttlMs: queueTtl(options) },
      lock: { key: lockKey(conversationId), ttlMs: options.lockTtlMs },
    });
    if (!admitted.claimed) return { claim: dedupe.writes?.refused(admitted.current) ?? 'in_flight' };
    return { claim: 'claimed', work: follow(item, member, fresh, admitted.lock ? admitted : undefined) };
  };

  /** Sees an admitted delivery handled, here or by the instance that holds its conversation. */
  const follow = async (
    item: QueuedItem,
    member: string,
    fresh: { member: string; until: number },
    admitted: { lock: StoreLock; queued: string[] } | undefined,
  ): Promise<LaneOutcome> => {
    const conversationId = item.event.conversationId;
    let settle!: (outcome: BatchOutcome) => void;
    const settled = new Promise<BatchOutcome>((resolve) => {
      settle = resolve;
    });
    let outcome: BatchOutcome | undefined;
    waiting.set(item.webhookId, (value) => {
      outcome = value;
      settle(value);
    });
    local.set(member, item);
    // This process answers for the claim while it waits: were it to die, the claim expires soon.
    const letGo = dedupe.hold?.([item.webhookId]);
    let next: ReleaseWait | undefined;
    let unsubscribe: (() => Promise<void>) | undefined;
    try {
      let interrupted = false;
      // The first try of the lock was the admit's.
      let first: { lock: StoreLock; queued: string[] } | 'busy' | undefined = admitted ?? 'busy';
      for (;;) {
        // Listen before trying, so a release between the try and the wait is not missed.
        next = nextRelease(conversationId);
        const held = first === 'busy' ? 'busy' : await drain(conversationId, fresh, first);
        first = undefined;
        if (outcome !== undefined) return outcome;
        // We emptied the queue without meeting our item: a holder settled it and removed it. Its
        // dedupe record tells how: done (200), or failed (500: the service's retry runs it again).
        if (held === 'drained') {
          if (!dedupe.state) return 'elsewhere';
          return (await dedupe.state(item.webhookId)) === 'done' ? 'ok' : 'failed';
        }
        if (!unsubscribe) {
          const wakeCurrent = () => next?.wake();
          unsubscribe = await store.subscribe(`released:${conversationId}`, wakeCurrent);
          if (held === 'busy') {
            next.cancel();
            continue; // the holder may have released before we listened: try once more at once
          }
        }
        if (held === 'busy' && policy === 'interrupt' && !interrupted) {
          interrupted = true;
          await store.publish(`interrupt:${conversationId}`, String(sequenceOf(item)));
        }
        await Promise.race([settled, next.released, sleep(Math.max(1, Math.floor(options.lockTtlMs / 3)))]);
        next.cancel();
        if (outcome !== undefined) return outcome;
      }
    } catch (error) {
      options.report(error);
      return outcome ?? 'store_failed';
    } finally {
      letGo?.();
      waiting.delete(item.webhookId);
      local.delete(member);
      next?.cancel();
      await unsubscribe?.().catch(options.report);
    }
  };

  return { admit };
}

const sequenceOf = (item: QueuedItem | undefined) => item?.event.message.sequence ?? 0;
