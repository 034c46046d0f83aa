// A delivery to an idle conversation on a store with synchronous steps (the memory store, see
// src/store/sync-steps.ts): its admit found nothing queued and won the lock, so it runs at once, in
// the turn of its admit, and settles in the turn its handlers end. Between the two there is no store
// promise, no wait bookkeeping and no renewal timer: the lock was taken for the handler's whole
// lifetime (maxHandlerMs plus one TTL), since a lock in this process's memory cannot be lost while
// the process lives. Nor is the message queued while it runs: only its holder could read it there, and
// a process that dies takes the store with it; a run that stops before its settle queues it then.
// What stays as on the composed path: the handler's lifetime bound (its signal fires with a
// TimeoutError past maxHandlerMs, the message is left queued and the conversation given up one TTL
// later), the done mark written in the settle, a failed run settled without a mark (the service's
// retry runs it), the release only once a read found the queue empty, and under 'interrupt' a newer
// message's signal (through the store's channel, as on the composed path) stopping the run. A message
// queued while the handler ran makes the settle keep the lock; this holder then works through the
// queue as any holder does (lane-holder.ts), renewal timer included, its delivery answered meanwhile.

import type { StoreLock } from '../store/bot-store.js';
import type { SyncSteps } from '../store/sync-steps.js';
import { type BatchOutcome, type QueuedItem, type StopReason, stopError } from './batch.js';
import type { LaneOptions } from './conversation-lanes.js';
import { createDeadlines } from './deadlines.js';
import { type createHolder, queueKey, queueTtl, sequenceOf } from './lane-holder.js';

/** What the fast path needs from its lanes. @internal */
export interface FastPathDeps extends LaneOptions {
  steps: SyncSteps;
  /** The lanes' holder, which takes over when messages were queued meanwhile. */
  drain: ReturnType<typeof createHolder>;
  /** Wakes this process's waiters of a conversation once its lock was released. */
  notifyReleased(conversationId: string): void;
}

/**
 * How long a fast-path holder takes its lock for: the handler's lifetime, then one TTL, which is when
 * a renewed lock would expire after a handler stopped at maxHandlerMs. @internal
 */
export const lockTtlForRun = (o: Pick<LaneOptions, 'maxHandlerMs' | 'lockTtlMs'>) =>
  o.maxHandlerMs + o.lockTtlMs;

/**
 * Runs an admitted delivery that holds its idle conversation's lock (already kept for
 * {@link lockTtlForRun}); resolves with its outcome once it was settled in the store, or, when
 * messages were queued meanwhile, tells it (`told`) then and resolves once they were drained. Never
 * rejects.
 * @internal
 */
export function createFastPath(deps: FastPathDeps) {
  const { steps, dedupe } = deps;
  // Done marks go with the settle when the dedupe lives in the bot's own store.
  const deferDone = dedupe.writes !== undefined;
  // Every run's lifetime under one timer (deadlines.ts), as 'concurrent' runs have; never keeps the
  // process alive on its own.
  const lifetimes = createDeadlines(deps.maxHandlerMs, false);

  return async (
    item: QueuedItem,
    member: string,
    lock: StoreLock,
    told: (outcome: BatchOutcome) => void,
  ): Promise<BatchOutcome> => {
    const conversationId = item.event.conversationId;
    const controller = new AbortController();
    let stop: StopReason | undefined;
    // The first reason wins, as on the composed path.
    const abort = (reason: StopReason) => {
      if (controller.signal.aborted) return;
      stop = reason;
      controller.abort(stopError(reason));
    };
    const sequence = sequenceOf(item);
    // As a holder that stopped: the message is left queued and the lock expires one TTL from now (when
    // its renewals would have stopped), so the next holder runs it, and no one mistakes what is queued
    // for a fresh delivery. Done when the lifetime runs out, whether or not the handler returns.
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      steps.enqueue(queueKey(conversationId), member, sequence, queueTtl(deps));
      steps.extend(lock, deps.lockTtlMs);
    };
    const lifetime = lifetimes.add(() => {
      abort('expired');
      leave();
    }, undefined);
    // 'interrupt': a newer message of the conversation (its waiter publishes its sequence) stops this run.
    const unlisten =
      deps.policy === 'interrupt'
        ? steps.listen(`interrupt:${conversationId}`, (message) => {
            if (Number(message) > sequence) abort('interrupted');
          })
        : undefined;
    let outcome: BatchOutcome;
    try {
      outcome = await deps.runBatch([item], controller.signal, () => stop, deferDone);
    } finally {
      lifetimes.remove(lifetime);
      unlisten?.();
    }
    // An interrupted run counts as done (the newer message answers instead): settled as any other,
    // unless its lifetime ran out too before it returned.
    if (left || outcome === 'store_failed') {
      leave();
      if (outcome !== 'ok' || !dedupe.writes) return outcome;
      // Interrupted, then past its lifetime: its done mark still counts, as on the composed path.
      const mark = dedupe.writes.done(item.webhookId);
      return deps.store.set(mark.key, mark.value, mark.ttlMs).then(
        () => outcome,
        (error: unknown) => {
          deps.report(error);
          return 'store_failed' as const;
        },
      );
    }
    let next: ReturnType<SyncSteps['settle']>;
    try {
      next = steps.settle({
        lock,
        lockTtlMs: deps.lockTtlMs,
        queueTtlMs: queueTtl(deps),
        marks: outcome === 'ok' && dedupe.writes ? [dedupe.writes.done(item.webhookId)] : [],
        settled: [],
        queue: queueKey(conversationId),
        released: { channel: `released:${conversationId}`, message: '' },
      });
    } catch (error) {
      deps.report(error);
      return 'store_failed';
    }
    if (next.outcome === 'released') deps.notifyReleased(conversationId);
    else if (next.outcome === 'queued') {
      // Queued meanwhile: the settle kept the lock for one TTL; hold it as any holder does. This
      // delivery's outcome is recorded already, so it is answered now (a 10 s handler per message
      // would otherwise keep it past ackTimeoutMs); a failure from here on is the next messages'.
      told(outcome);
      await deps.drain(conversationId, undefined, { lock, queued: next.queued }).catch(deps.report);
    }
    return outcome;
  };
}
