// The holder of a conversation's lock: it reads the queue, runs what is there in order, and settles
// what ran (done marks and removal in one step with the next read), until a read finds the queue
// empty and the same step releases the lock. A message leaves the queue only in the settle that
// records it, so a holder killed mid-handler leaves it, and what follows, to the next holder. A holder
// that stopped mid-way (lock lost, store failed) lets its lock expire instead of releasing it. A
// delivery hears its outcome only once its settle recorded it.

import { type MessageReceivedEvent, parseWebhookEvent } from '../schemas/webhooks.js';
import type { StoreLock } from '../store/bot-store.js';
import { settleWith } from '../store/compound.js';
import { type BatchOutcome, type QueuedItem, type StopReason, stopError } from './batch.js';
import type { LaneOptions } from './conversation-lanes.js';
import { holdLock } from './lock-hold.js';
import type { DedupeWrite } from './store-dedupe.js';

/** The store keys of a conversation's queue and lock. @internal */
export const queueKey = (conversationId: string) => `queue:${conversationId}`;
/** @internal */
export const lockKey = (conversationId: string) => `conversation:${conversationId}`;

/**
 * How long a conversation's queue is kept: a queued item outlives any wait for the lock (the longest
 * handler plus a lock's expiry). Counted from the last enqueue, and from each holder's read that
 * found members left, so a backlog worked through for longer is kept while its holder lives. @internal
 */
export const queueTtl = (o: Pick<LaneOptions, 'maxHandlerMs' | 'lockTtlMs' | 'debounceMs'>) =>
  o.maxHandlerMs + 2 * o.lockTtlMs + o.debounceMs;

/** A message's place in its conversation: the queue's score. @internal */
export const sequenceOf = (item: QueuedItem | undefined) => item?.event.message.sequence ?? 0;

/**
 * A delivery as its conversation's queue keeps it: `{"webhookId":…,"event":…}` with the body text as
 * it came, so every instance writes the same member for one delivery (a redelivery keeps one entry).
 * @internal
 */
export const queueMember = (webhookId: string, text: string) =>
  `{"webhookId":${JSON.stringify(webhookId)},"event":${text}}`;

/** A member another holder (or process) queued, checked as the delivery was; `undefined` if it is not one. */
function readMember(member: string): QueuedItem | undefined {
  try {
    const { webhookId, event } = JSON.parse(member) as { webhookId?: unknown; event?: unknown };
    if (typeof webhookId !== 'string') return undefined;
    // Checked by its schema, as verify.ts checks a delivery.
    const checked = parseWebhookEvent(event);
    if (!checked.success || checked.data.type !== 'message.received') return undefined;
    return { webhookId, event: checked.data as MessageReceivedEvent };
  } catch {
    return undefined;
  }
}

/** A timer that never keeps a Node process alive on its own. @internal */
export const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    (timer as { unref?: () => void }).unref?.();
  });

/** What a holder needs from its lanes. @internal */
export interface HolderDeps extends LaneOptions {
  /** The deliveries of this process waiting on their outcome, by webhook id. */
  waiting: Map<string, (outcome: BatchOutcome) => void>;
  /** The members this process queued and still waits on: read back unparsed. */
  local: Map<string, QueuedItem>;
  /** Wakes this process's waiters of a conversation once its lock was released. */
  notifyReleased(conversationId: string): void;
}

/** The drain of one bot's lanes. @internal */
export function createHolder(deps: HolderDeps) {
  const { store, policy, dedupe, waiting, local, notifyReleased } = deps;
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
      const item = local.get(member) ?? readMember(member);
      if (!item) {
        // Not a message this bot could have queued (a store shared with something else): dropped.
        deps.report(
          new TypeError(`a queued member is not a message.received delivery: ${member.slice(0, 80)}`),
        );
        settled.push(member);
        continue;
      }
      const id = item.webhookId;
      if (ran.has(id) || (member !== fresh && (await dedupe.state?.(id)) === 'done')) {
        settled.push(member);
        if (!ran.has(id)) waiting.get(id)?.('ok');
      } else batch.push({ member, item });
    }
    return batch;
  };

  /** {@link runnable} without a turn of the event loop for the fast path: the caller's own message alone. */
  const runnableNow = (
    members: string[],
    fresh: string | undefined,
    ran: ReadonlySet<string>,
    settled: string[],
  ) => {
    const only = members.length === 1 ? members[0] : undefined;
    const item = only !== undefined && only === fresh ? local.get(only) : undefined;
    return only !== undefined && item && !ran.has(item.webhookId)
      ? [{ member: only, item }]
      : runnable(members, fresh, ran, settled);
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
    const lock = admitted?.lock ?? (await store.acquireLock(lockKey(conversationId), deps.lockTtlMs));
    if (!lock) return 'busy';
    // No other holder that read the caller's delivery can have let its lock expire before now.
    const freshMember = fresh && Date.now() < fresh.until ? fresh.member : undefined;
    const ran = new Set<string>();
    let running: { controller: AbortController; sequence: number } | undefined;
    let stop: StopReason | undefined;
    const stopped = () => stop;
    const abort = (reason: StopReason) => {
      if (!running || running.controller.signal.aborted) return;
      stop = reason;
      running.controller.abort(stopError(reason));
    };
    const hold = holdLock(store, lock, {
      ttlMs: deps.lockTtlMs,
      maxMs: deps.maxHandlerMs,
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
          await sleep(deps.debounceMs);
          members = undefined;
        }
        if (members === undefined) {
          const next = await settleWith(store, {
            lock,
            lockTtlMs: deps.lockTtlMs,
            queueTtlMs: queueTtl(deps),
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
        const found = runnableNow(next, freshMember, ran, settled);
        const batch = Array.isArray(found) ? found : await found;
        members = undefined;
        if (batch.length === 0) continue;
        running = { controller: new AbortController(), sequence: sequenceOf(batch.at(-1)?.item) };
        stop = undefined;
        hold.arm();
        const items = batch.map(({ item }) => item);
        const outcome = await deps.runBatch(items, running.controller.signal, stopped, deferDone);
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
      await unsubscribe?.().catch(deps.report);
      // Released (and published) by the settle that found the queue empty; a holder that stopped
      // mid-way lets its lock expire, so no one mistakes what it left queued for a fresh delivery.
      if (result === 'drained') notifyReleased(conversationId);
    }
    return result;
  };

  return drain;
}
