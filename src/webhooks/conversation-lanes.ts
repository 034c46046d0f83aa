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

import type { BotStore } from '../store/bot-store.js';
import { type BatchOutcome, type QueuedItem, type StopReason, stopError } from './batch.js';
import { holdLock } from './lock-hold.js';
import { createReleaseWaiters, type ReleaseWait } from './release-waiters.js';
import type { Deduper } from './store-dedupe.js';

/** The conversation policies that use the lock. */
export type LanePolicy = 'queue' | 'interrupt' | 'debounce';

/**
 * A delivery's fate: its batch's outcome (also when another instance ran it, as its dedupe record
 * says), or `'elsewhere'` when another instance ran it and the outcome cannot be known (the
 * deprecated `dedupe` option, which cannot tell).
 */
export type LaneOutcome = BatchOutcome | 'elsewhere';

/** What the lanes need. @internal */
export interface LaneOptions {
  store: BotStore;
  policy: LanePolicy;
  lockTtlMs: number;
  maxHandlerMs: number;
  debounceMs: number;
  /** Runs one batch and settles its dedupe; never throws. */
  runBatch(
    items: QueuedItem[],
    signal: AbortSignal,
    stopped: () => StopReason | undefined,
  ): Promise<BatchOutcome>;
  report(error: unknown): void;
  /** The bot's dedupe: where a delivery's claim stands (`state`) and keeping claims alive (`hold`). */
  dedupe: Pick<Deduper, 'state' | 'hold'>;
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
  const { notifyReleased, nextRelease } = createReleaseWaiters();
  const queueKey = (conversationId: string) => `queue:${conversationId}`;

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
      const item = JSON.parse(member) as QueuedItem;
      const id = item.webhookId;
      if (ran.has(id) || (member !== fresh && (await dedupe.state?.(id)) === 'done')) {
        settled.push(member);
        if (!ran.has(id)) waiting.get(id)?.('ok');
      } else batch.push({ member, item });
    }
    return batch;
  };

  /**
   * Holds the lock and handles the queue until a read finds it empty (`'drained'`); `'busy'` when
   * someone else holds the lock, `'stopped'` when the lock was lost or the store failed mid-way
   * (what was not settled stays queued for the next holder).
   */
  const drain = async (
    conversationId: string,
    fresh: { member: string; until: number } | undefined,
  ): Promise<'drained' | 'busy' | 'stopped'> => {
    const lock = await store.acquireLock(`conversation:${conversationId}`, options.lockTtlMs);
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
    try {
      if (policy === 'interrupt') {
        unsubscribe = await store.subscribe(`interrupt:${conversationId}`, (message) => {
          if (running && Number(message) > running.sequence) abort('interrupted');
        });
      }
      let settled: string[] = [];
      while (!hold.loss) {
        if (policy === 'debounce') await sleep(options.debounceMs);
        const members = await store.readQueued(queueKey(conversationId), settled);
        settled = [];
        if (members.length === 0) {
          result = 'drained';
          break;
        }
        // 'queue' handles the first message alone, then reads again (a retry of an earlier message
        // queued meanwhile comes next); the others hand everything queued to one run.
        const next = policy === 'queue' ? members.slice(0, 1) : members;
        const batch = await runnable(next, freshMember, ran, settled);
        if (batch.length === 0) continue;
        running = { controller: new AbortController(), sequence: sequenceOf(batch.at(-1)?.item) };
        stop = undefined;
        hold.arm();
        const items = batch.map(({ item }) => item);
        const outcome = await options.runBatch(items, running.controller.signal, () => stop);
        hold.disarm();
        running = undefined;
        for (const item of items) {
          waiting.get(item.webhookId)?.(outcome);
          if (outcome === 'ok') ran.add(item.webhookId); // a failed one may come back with its retry
        }
        // A lost lock leaves the message queued for the next holder, a failed store leaves it unsettled.
        if (outcome === 'store_failed' || hold.loss) break;
        settled.push(...batch.map(({ member }) => member));
      }
    } finally {
      hold.stop();
      await unsubscribe?.().catch(options.report);
      // Released only after an empty read: a holder that stopped mid-way lets its lock expire, so no
      // one can mistake what it left unsettled in the queue for a fresh delivery of their own.
      if (result === 'drained') {
        await store.releaseLock(lock).catch(options.report);
        notifyReleased(conversationId);
        await store.publish(`released:${conversationId}`, '').catch(options.report);
      }
    }
    return result;
  };

  /** Queues the delivery and sees it handled, here or by the instance that holds its conversation. */
  const submit = async (item: QueuedItem): Promise<LaneOutcome> => {
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
    // This process answers for the claim while it waits: were it to die, the claim expires soon.
    const letGo = dedupe.hold?.([item.webhookId]);
    let next: ReleaseWait | undefined;
    let unsubscribe: (() => Promise<void>) | undefined;
    try {
      const fresh = { member: JSON.stringify(item), until: Date.now() + options.lockTtlMs };
      await store.enqueue(queueKey(conversationId), fresh.member, sequenceOf(item), queueTtl(options));
      let interrupted = false;
      for (;;) {
        // Listen before trying, so a release between the try and the wait is not missed.
        next = nextRelease(conversationId);
        const held = await drain(conversationId, fresh);
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
      next?.cancel();
      await unsubscribe?.().catch(options.report);
    }
  };

  return { submit };
}

const sequenceOf = (item: QueuedItem | undefined) => item?.event.message.sequence ?? 0;
