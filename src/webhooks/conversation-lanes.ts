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
// the next read or, when empty, the release), one round trip each on a store that has them. On the
// memory store (synchronous steps, src/store/sync-steps.ts) a message to an idle conversation under
// 'queue' or 'interrupt' runs in the turn of its admit and settles in the turn its run ends, holding
// the lock for its lifetime without renewals (lane-fast-path.ts); what follows is for every other case.

import type { BotStore, StoreLock } from '../store/bot-store.js';
import { admitWith } from '../store/compound.js';
import { syncStepsOf } from '../store/sync-steps.js';
import type { BatchOutcome, QueuedItem, StopReason } from './batch.js';
import { createFastPath, lockTtlForRun } from './lane-fast-path.js';
import { createHolder, lockKey, queueKey, queueMember, queueTtl, sequenceOf, sleep } from './lane-holder.js';
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

/**
 * A delivery admitted to its lane: its claim refused, or claimed and being handled. `work` resolves
 * with its own message's outcome once that was settled; `drained`, when given, once everything the
 * delivery started has ended: the holder of a conversation goes on through the messages queued behind
 * its own after `work` resolved, and that drain must be kept alive (`bot.idle()`, `waitUntil`).
 */
export type Admission =
  | { claim: 'in_flight' | 'done' }
  | { claim: 'claimed'; work: Promise<LaneOutcome>; drained?: Promise<unknown> };

/**
 * The admission of a claimed delivery whose run (`start`) may go on after its own outcome: `work`
 * resolves at the first `told` (or with the run's end), `drained` with the run's end.
 */
function claimedRun(
  start: (told: (outcome: LaneOutcome) => void) => Promise<LaneOutcome>,
  report: (error: unknown) => void,
): Admission {
  let told!: (outcome: LaneOutcome) => void;
  const work = new Promise<LaneOutcome>((resolve) => {
    told = resolve;
  });
  const drained = start(told).then(told, (error: unknown) => {
    report(error);
    told('store_failed');
  });
  return { claim: 'claimed', work, drained };
}

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

/** The lanes of one bot: `admit` takes a delivery in, its `work` resolves once its message was handled. @internal */
export function createLanes(options: LaneOptions) {
  const { store, policy, dedupe } = options;
  const waiting = new Map<string, (outcome: BatchOutcome) => void>();
  // The members this process queued and still waits on: a holder here reads them back unparsed.
  const local = new Map<string, QueuedItem>();
  const { notifyReleased, nextRelease } = createReleaseWaiters();

  const drain = createHolder({ ...options, waiting, local, notifyReleased });
  // The memory store's synchronous steps, for 'queue' and 'interrupt' ('debounce' waits before it
  // reads the queue: it keeps the composed path).
  const steps = policy === 'debounce' ? undefined : syncStepsOf(store);
  const runIdle = steps && createFastPath({ ...options, steps, drain, notifyReleased });

  /**
   * Admits a delivery in one store step: its claim (unless `claimed`: the deprecated `dedupe` option
   * claimed it elsewhere), its place in the queue, a try of the lock and, when won, the read. `text`
   * is the verified body, queued as it came (no second serialization of the event).
   */
  const admit = async (item: QueuedItem, claimed: boolean, text: string): Promise<Admission> => {
    const conversationId = item.event.conversationId;
    const member = queueMember(item.webhookId, text);
    const request = {
      ...(claimed || !dedupe.writes ? {} : { claim: dedupe.writes.claim(item.webhookId) }),
      queue: { key: queueKey(conversationId), member, score: sequenceOf(item), ttlMs: queueTtl(options) },
      lock: { key: lockKey(conversationId), ttlMs: options.lockTtlMs },
    };
    const admitted = steps ? steps.admit(request, lockTtlForRun(options)) : await admitWith(store, request);
    if (!admitted.claimed) return { claim: dedupe.writes?.refused(admitted.current) ?? 'in_flight' };
    const { lock } = admitted;
    // An idle conversation on a synchronous store: the lock was taken for the handler's lifetime and
    // the message not queued; it runs now (lane-fast-path.ts).
    if (runIdle && lock && admitted.queued.length === 0) {
      return claimedRun((told) => runIdle(item, member, lock, told), options.report);
    }
    const fresh = { member, until: Date.now() + options.lockTtlMs };
    const held = lock ? admitted : undefined;
    return claimedRun((told) => follow(item, member, fresh, held, told), options.report);
  };

  /**
   * Sees an admitted delivery handled, here or by the instance that holds its conversation. `told`
   * hears its outcome once its batch settled; a holder here goes on through the rest of the queue
   * before this resolves.
   */
  const follow = async (
    item: QueuedItem,
    member: string,
    fresh: { member: string; until: number },
    admitted: { lock: StoreLock; queued: string[] } | undefined,
    told: (outcome: LaneOutcome) => void,
  ): Promise<LaneOutcome> => {
    const conversationId = item.event.conversationId;
    let outcome: BatchOutcome | undefined;
    let settle: ((outcome: BatchOutcome) => void) | undefined;
    let settled: Promise<BatchOutcome> | undefined;
    waiting.set(item.webhookId, (value) => {
      outcome = value;
      told(value);
      settle?.(value);
    });
    local.set(member, item);
    let letGo: (() => void) | undefined;
    let next: ReleaseWait | undefined;
    let unsubscribe: (() => Promise<void>) | undefined;
    try {
      let interrupted = false;
      let requeued = false;
      // The first try of the lock was the admit's; when it won, nothing needs to wait (yet).
      let held = admitted ? await drain(conversationId, fresh, admitted) : 'busy';
      for (;;) {
        if (outcome !== undefined) return outcome;
        // We emptied the queue without meeting our item: a holder settled it and removed it. Its
        // dedupe record tells how: done (200), or failed (500: the service's retry runs it again).
        if (held === 'drained') {
          if (!dedupe.state) return 'elsewhere';
          const state = await dedupe.state(item.webhookId);
          if (state !== 'in_flight' || requeued) return state === 'done' ? 'ok' : 'failed';
          // Still our claim, yet our member is gone: a holder's run of the same message failed and
          // freed the claim, we took it (a retry waiting on that run, retry-wait.ts), and its settle
          // then removed the member we had queued again. Nobody runs it now: queue it once more.
          requeued = true;
          await store.enqueue(queueKey(conversationId), member, sequenceOf(item), queueTtl(options));
          next?.cancel();
          next = nextRelease(conversationId);
          held = await drain(conversationId, undefined);
          continue;
        }
        // This process answers for the claim while it waits: were it to die, the claim expires soon.
        letGo ??= dedupe.hold?.([item.webhookId]);
        if (!unsubscribe) {
          // Then try once more at once: the holder may have released before we listened.
          unsubscribe = await store.subscribe(`released:${conversationId}`, () => next?.wake());
        } else {
          if (held === 'busy' && policy === 'interrupt' && !interrupted) {
            interrupted = true;
            await store.publish(`interrupt:${conversationId}`, String(sequenceOf(item)));
          }
          settled ??= new Promise<BatchOutcome>((resolve) => {
            settle = resolve;
          });
          await Promise.race([
            settled,
            next?.released,
            sleep(Math.max(1, Math.floor(options.lockTtlMs / 3))),
          ]);
          next?.cancel();
          if (outcome !== undefined) return outcome;
        }
        // Listen before trying, so a release between the try and the wait is not missed.
        next = nextRelease(conversationId);
        held = await drain(conversationId, fresh);
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
