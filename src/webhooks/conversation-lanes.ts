// Per-conversation order over the bot store, for the 'queue', 'interrupt' and 'debounce' policies.
//
// A delivery is claimed (dedupe), then put in its conversation's queue in the store (ordered by
// `sequence`), and only then does anyone try the conversation's lock, so no claimed message can be
// lost by a failed lock attempt (Chat SDK's first bug). Whoever holds the lock takes the whole queue
// and handles all of it (never "the latest plus skipped"), then takes again until the queue is
// empty, then releases. A delivery that found the lock held waits for the release (in process,
// through the store's publish/subscribe, and by polling for a holder that died) and then tries
// the lock itself: so a message queued between the holder's last take and its release is never
// stranded (Chat SDK's second bug), whatever instance queued it.

import type { BotStore } from '../store/bot-store.js';
import { type BatchOutcome, type QueuedItem, type StopReason, stopError } from './batch.js';
import { holdLock } from './lock-hold.js';
import { createReleaseWaiters, type ReleaseWait } from './release-waiters.js';

/** The conversation policies that use the lock. */
export type LanePolicy = 'queue' | 'interrupt' | 'debounce';

/**
 * A delivery's fate: its batch's outcome (also when another instance ran it, as its dedupe record
 * says), or `'elsewhere'` when another instance took it and the outcome cannot be known.
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
  /** Where the dedupe record of a delivery another instance took stands; absent when unknowable. */
  claimState?(webhookId: string): Promise<'in_flight' | 'done' | undefined>;
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
  const { store, policy } = options;
  const waiting = new Map<string, (outcome: BatchOutcome) => void>();
  const { notifyReleased, nextRelease } = createReleaseWaiters();

  /** Holds the lock and handles the queue until it is empty; `false` when someone else holds it. */
  const drain = async (conversationId: string): Promise<boolean> => {
    const lock = await store.acquireLock(`conversation:${conversationId}`, options.lockTtlMs);
    if (!lock) return false;
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
    try {
      if (policy === 'interrupt') {
        unsubscribe = await store.subscribe(`interrupt:${conversationId}`, (message) => {
          if (running && Number(message) > running.sequence) abort('interrupted');
        });
      }
      while (!hold.loss) {
        if (policy === 'debounce') await sleep(options.debounceMs);
        const items = (await store.takeQueued(`queue:${conversationId}`)).map(
          (member) => JSON.parse(member) as QueuedItem,
        );
        if (items.length === 0) break;
        // 'queue' handles each message alone, in order; the others hand the whole batch to one run.
        const batches = policy === 'queue' ? items.map((item) => [item]) : [items];
        for (const [index, batch] of batches.entries()) {
          if (hold.loss) {
            // Taken but not run: back into the queue for the next holder, nothing dropped.
            for (const rest of batches.slice(index).flat()) await enqueue(rest);
            break;
          }
          running = { controller: new AbortController(), sequence: sequenceOf(batch.at(-1)) };
          stop = undefined;
          hold.arm();
          const outcome = await options.runBatch(batch, running.controller.signal, () => stop);
          hold.disarm();
          running = undefined;
          for (const item of batch) waiting.get(item.webhookId)?.(outcome);
        }
      }
    } finally {
      hold.stop();
      await unsubscribe?.().catch(options.report);
      if (!hold.loss) {
        await store.releaseLock(lock).catch(options.report);
        notifyReleased(conversationId);
        await store.publish(`released:${conversationId}`, '').catch(options.report);
      }
    }
    return true;
  };

  const enqueue = (item: QueuedItem) =>
    store.enqueue(
      `queue:${item.event.conversationId}`,
      JSON.stringify(item),
      sequenceOf(item),
      queueTtl(options),
    );

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
    let next: ReleaseWait | undefined;
    let unsubscribe: (() => Promise<void>) | undefined;
    try {
      await enqueue(item);
      let interrupted = false;
      for (;;) {
        // Listen before trying, so a release between the try and the wait is not missed.
        next = nextRelease(conversationId);
        const held = await drain(conversationId);
        if (outcome !== undefined) return outcome;
        // We held the lock and emptied the queue without meeting our item: another instance took it.
        // Its dedupe record tells how that went: done (200), released (500: the retry runs it), or
        // still running there (keep waiting, so the service gets the real answer if time allows).
        if (held) {
          const state = await options.claimState?.(item.webhookId);
          if (state === 'done') return 'ok';
          if (state === undefined) return options.claimState ? 'failed' : 'elsewhere';
        }
        if (!unsubscribe) {
          const wakeCurrent = () => next?.wake();
          unsubscribe = await store.subscribe(`released:${conversationId}`, wakeCurrent);
          if (!held) {
            next.cancel();
            continue; // the holder may have released before we listened: try once more at once
          }
        }
        if (!held && policy === 'interrupt' && !interrupted) {
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
      waiting.delete(item.webhookId);
      next?.cancel();
      await unsubscribe?.().catch(options.report);
    }
  };

  return { submit };
}

const sequenceOf = (item: QueuedItem | undefined) => item?.event.message.sequence ?? 0;
