// Every delivery's way from its claim to its settle, over the bot store, for every store and every
// policy: 'queue', 'interrupt' and 'debounce' keep per-conversation order with a lock; 'concurrent'
// (and every event of no conversation) is the same claim, run and done mark without the lock.
//
// A conversation's message is claimed (dedupe), put in its conversation's queue (ordered by
// `sequence`) and only then is the lock tried, all in the store's one `admit` step, so no claimed
// message can be lost by a failed lock attempt (Chat SDK's first bug). Whoever holds the lock reads
// the queue and handles all of it in order (never "the latest plus skipped"); a message leaves the
// queue only in the `settle` step that records it (done, or failed for the service's retry), which
// also reads the queue again or, when it is empty, releases the lock. A holder killed mid-handler
// leaves its message, and the ones after it, queued for the next holder, who runs them first. A
// delivery that found the lock held waits for the release (in process, through the store's
// publish/subscribe, and by polling for a holder that died) and then tries the lock itself, so a
// message queued between the holder's last read and its release is never stranded (Chat SDK's second
// bug), whatever instance queued it. A delivery hears its outcome only once its settle recorded it.
//
// The lock is renewed every second (a third of its TTL when shorter) while held, and a run is bounded
// by `maxHandlerMs`: past it the run's signal fires and the holder, still renewing, waits one lock
// TTL more for the run to end, so no other holder can run the batch while it may still be running.
// A run that ended counts as a failed attempt; one that did not is given up at once (marked done,
// never run again) and the holder moves on, the stuck run's replies being refused by its fired
// signal (message-context.ts). A message whose runs failed `maxAttempts` times is given up too
// (attempts counted in the store, below), so no message is retried forever. Every renewal, lifetime
// and grace of the bot shares one timer each (timers.ts).
//
// Deliveries are deduplicated by webhook-id in the same store. The service retries a delivery with the
// same id for 5 s + 5 min + 30 min + 2 h + 5 h + 10 h (PROTOCOL.md section 6), about 17.6 hours, so a
// handled id is kept at least that long; any shorter and a late retry would run its handler again.
//   claim   -> set if absent (id, 'in_flight', one lock TTL): the first step of `admit`
//   renew   -> compareAndSet(id, 'in_flight', 'in_flight', one lock TTL) while someone alive needs it
//   done    -> set(id, 'done', 18 h): written by the `settle` that removes the message from its queue
//   release -> compareAndSet(id, 'in_flight', absent): the run failed, so the retry runs it
//   attempt -> increment(attempts:id, 18 h): each failed run, counted where every instance sees it;
//              the run that makes it `maxAttempts` gives the message up (marked done) instead
// An in-flight claim is renewed as often by whoever is alive and answerable for it: the
// process that took the delivery, while it waits for its conversation or runs it, and the
// conversation's holder while it runs it. A claim whose every holder died expires within one TTL, so
// the service's next retry runs the message; the message itself stays queued, so a later holder of
// its conversation may run it even before that retry.

import { sleep } from '../core/retry.js';
import type { Message } from '../schemas/messages.js';
import type { MessageReceivedEvent, WebhookEvent } from '../schemas/webhooks.js';
import { type BotStore, renewalEveryMs, type StoreAnswer, type StoreLock } from '../store/bot-store.js';
import type { AdmitResult, SettleRequest } from '../store/compound.js';
import { claimOnce } from '../store/compound.js';
import { StoreUnavailableError } from '../store/store-error.js';
import { recordMetric } from '../telemetry.js';
import type { DeliveryTrace } from './delivery.js';
import { MessageGivenUpError } from './given-up-error.js';
import { createDeadlines, type Deadline, type Deadlines } from './timers.js';
import { parseWebhookEvent } from './verify.js';

/** Whether a store's answer is still pending (a promise, or any thenable), so it must be awaited. The lanes await only such an answer. */
export const pending = <T>(answer: StoreAnswer<T>): answer is Promise<T> =>
  typeof (answer as { then?: unknown } | undefined)?.then === 'function';

/** The whole retry schedule of the service (17 h 35 min 5 s) and some slack for clock skew. */
export const DEDUPE_RETENTION_MS = 18 * 60 * 60 * 1000;

/** A dedupe step as a store write (a claim is set only if absent). */
interface DedupeWrite {
  key: string;
  value: string;
  ttlMs: number;
}

const dedupeKey = (id: string) => `dedupe:${id}`;

/** The done mark of `id`, kept for the whole retry schedule. */
const doneWrite = (id: string): DedupeWrite => ({
  key: dedupeKey(id),
  value: 'done',
  ttlMs: DEDUPE_RETENTION_MS,
});

/** Forgets an in-flight claim so the retry runs it; a 'done' written by another holder stays done. */
async function releaseClaim(store: BotStore, id: string): Promise<void> {
  await store.compareAndSet(dedupeKey(id), 'in_flight', undefined);
}

/** Where another holder left the id: `'done'`, `'in_flight'`, or `undefined` (released, never claimed). */
async function claimState(store: BotStore, id: string): Promise<'in_flight' | 'done' | undefined> {
  const value = await store.get(dedupeKey(id));
  return value === 'done' || value === 'in_flight' ? value : undefined;
}

/** Writes marks one by one (a run of no conversation, or a holder that lost its lock after a run). */
async function writeMarks(store: BotStore, marks: readonly DedupeWrite[]): Promise<void> {
  for (const mark of marks) await store.set(mark.key, mark.value, mark.ttlMs);
}

/**
 * Keeps the in-flight claims of ids alive, renewed at each of `renewals` (renewalEveryMs(inFlightMs))
 * until the function `hold` answers is called; holds from several callers add up. `report` hears a
 * renewal that failed (the store is down: the claim may expire, the lock then guards).
 */
function createClaimHolds(
  store: BotStore,
  inFlightMs: number,
  renewals: Deadlines,
  report: (error: unknown) => void,
) {
  const holds = new Map<string, number>();
  // One renewal for every claim of this process.
  let armed = false;
  const renewAll = () => {
    armed = holds.size > 0;
    if (!armed) return;
    for (const id of holds.keys()) {
      store.compareAndSet(dedupeKey(id), 'in_flight', 'in_flight', inFlightMs).catch(report);
    }
    renewals.add(renewAll, undefined);
  };
  const letGo = (id: string) => {
    const count = (holds.get(id) ?? 1) - 1;
    if (count > 0) holds.set(id, count);
    else holds.delete(id);
  };
  return (ids: readonly string[]): (() => void) => {
    for (const id of ids) holds.set(id, (holds.get(id) ?? 0) + 1);
    // Left armed when the last hold goes: a bot that handles each delivery within one turn would
    // otherwise add and remove a renewal per delivery.
    if (!armed) {
      armed = true;
      renewals.add(renewAll, undefined);
    }
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      for (const id of ids) letGo(id);
    };
  };
}

/** A verified delivery: its webhook id and event. @internal */
export interface Delivery {
  webhookId: string;
  event: WebhookEvent;
  /** Its telemetry, when OpenTelemetry records it and it was delivered to this process. */
  trace?: DeliveryTrace;
}

/** A delivery waiting for its conversation, as it is kept in the store's queue. @internal */
export type QueuedItem = Delivery & { event: MessageReceivedEvent };

/**
 * How a run ended for its deliveries: handled, failed (retry it), not recorded (store down), or left
 * to another instance because this bot is closing (its claim released, its message still queued).
 */
export type BatchOutcome = 'ok' | 'failed' | 'store_failed' | 'closed';

/** Why the runtime fired a handler's signal. */
export type StopReason = 'interrupted' | 'lost' | 'expired' | 'closed';

/**
 * A delivery admitted: its claim refused, or claimed and being handled. `work` resolves with its own
 * message's outcome once that was settled; `drained` once everything the delivery started has ended:
 * the holder of a conversation goes on through the messages queued behind its own after `work`
 * resolved, and that drain must be kept alive (`bot.idle()`, `waitUntil`). @internal
 */
export type Admission =
  | { claim: 'in_flight' | 'done' }
  | { claim: 'claimed'; work: Promise<BatchOutcome>; drained: Promise<unknown> };

/** Writes one line of the lanes' debug log (what a delivery waited for, ran, retried or dropped). @internal */
export type DebugLog = (message: string, fields: Record<string, unknown>) => void;

/** What the lanes need from the bot. @internal */
export interface LaneOptions {
  store: BotStore;
  policy: 'queue' | 'interrupt' | 'debounce' | 'concurrent';
  lockTtlMs: number;
  maxHandlerMs: number;
  debounceMs: number;
  /** How many failed runs of a message are tried before it is given up. */
  maxAttempts: number;
  /** How long a message waits for a missing predecessor under 'queue' and 'interrupt' ("Order with gaps" below). */
  gapWaitMs: number;
  /** One page of a conversation's history, read once per gap to tell a missing user message. */
  history: HistoryPage;
  /** Runs every handler for the batch (the last item is the message; all are `ctx.messages`). */
  run(items: readonly Delivery[], signal: AbortSignal): Promise<void>;
  /** Reports a failure to onError handlers or the logger; never throws. */
  report(error: unknown, event?: WebhookEvent, webhookId?: string): void;
  /** The debug log, when it is on. */
  debug: DebugLog | undefined;
}

/** Each stop's error: its name, then its message. */
const STOPS: Record<StopReason, [string, string]> = {
  interrupted: ['InterruptedError', 'A newer message in the conversation interrupted this handler.'],
  lost: [
    'LockLostError',
    "The conversation's lock was lost (the store did not renew it); another instance may take over.",
  ],
  expired: [
    'TimeoutError',
    'The handler ran past maxHandlerMs; the conversation moves on to the next message.',
  ],
  closed: [
    'ShutdownError',
    "The bot is closing (bot.close) and this handler ran past its deadline; the service's retry runs it again.",
  ],
};

/** The `ctx.signal.reason` for a stop: an Error whose name says which (`InterruptedError`, ...). */
export function stopError(reason: StopReason): Error {
  const [name, message] = STOPS[reason];
  const error = new Error(message);
  error.name = name;
  return error;
}

/** The store keys of a conversation's queue and lock. @internal */
export const queueKey = (conversationId: string) => `queue:${conversationId}`;
/** @internal */
export const lockKey = (conversationId: string) => `conversation:${conversationId}`;

/** A message's place in its conversation: the queue's score. */
const sequenceOf = (item: Delivery | undefined) =>
  (item?.event as MessageReceivedEvent | undefined)?.message.sequence ?? 0;

/**
 * A delivery as its conversation's queue keeps it: `{"webhookId":…,"event":…}` with the body text as
 * it came, so every instance writes the same member for one delivery (a redelivery keeps one entry).
 */
const queueMember = (webhookId: string, text: string) =>
  `{"webhookId":${JSON.stringify(webhookId)},"event":${text}}`;

/** A member another holder (or process) queued, checked as the delivery was; `undefined` if it is not one. */
function readMember(member: string): QueuedItem | undefined {
  try {
    const { webhookId, event } = JSON.parse(member) as { webhookId?: unknown; event?: unknown };
    if (typeof webhookId !== 'string') return undefined;
    const checked = parseWebhookEvent(event);
    if (!checked.success || checked.data.type !== 'message.received') return undefined;
    return { webhookId, event: checked.data as MessageReceivedEvent };
  } catch {
    return undefined;
  }
}

/** The queued messages a holder runs next, with the members they were read as. */
type Batch = { member: string; item: QueuedItem }[];

/** What an admit that won the lock read: the queue and, in order, the conversation's order record. */
type Admitted = { lock: StoreLock; queued: string[]; value?: string | undefined };

/** A conversation's lock while its holder works: renewed until it stops, or lost. */
interface Hold {
  readonly lock: StoreLock;
  /** When the store last confirmed the lock (taken or renewed): it is ours until a TTL after that. */
  confirmed: number;
  /** Set once the lock is no longer safely this holder's: a renewal failed. */
  loss: 'lost' | undefined;
  stopped: boolean;
  renewal: Deadline | undefined;
  running: Run | undefined;
}

/**
 * One run of the handlers over a batch, and what the runtime knows of it while it runs: its signal,
 * why it was stopped (the first reason wins), and the hold it runs under.
 */
interface Run {
  readonly items: readonly Delivery[];
  readonly controller: AbortController;
  stop: StopReason | undefined;
  readonly hold: Hold | undefined;
  /** Called once the run outlived maxHandlerMs and its grace: it is not waited on any longer. */
  overdue?: () => void;
  /** The grace it was given past maxHandlerMs, while it runs on. */
  grace?: Deadline;
  /** The ids of the batch given up (to be marked done whatever the run's outcome), set by `execute`. */
  givenUp?: ReadonlySet<string>;
}

/** How a run that returned ended. */
const RAN = { error: undefined, threw: false } as const;

/** Fires a run's signal for `reason`, unless it was stopped already. */
function stopRun(run: Run, reason: StopReason): void {
  if (run.controller.signal.aborted) return;
  run.stop = reason;
  run.controller.abort(stopError(reason));
}

/** A lock no longer safely held: no more renewals, and its running handler is stopped. */
function loseHold(hold: Hold): void {
  if (hold.loss || hold.stopped) return;
  hold.loss = 'lost';
  if (hold.running) stopRun(hold.running, 'lost');
}

/** True when `error`, or an error in its `cause` chain, is the bot store's failure. */
function causedByStore(error: unknown): boolean {
  for (let at = error, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth += 1) {
    if (StoreUnavailableError.is(at)) return true;
  }
  return false;
}

/** A holder under 'queue' or 'interrupt', as the deliveries of its process wake it from a gap's pause. */
interface GapHolder {
  /** A delivery of this process joined the queue since the holder's last read. */
  joined: boolean;
  /** Ends the holder's pause for a missing predecessor, while it pauses. */
  wake: (() => void) | undefined;
}

/** The message id of a delivery, when its event carries one. */
const messageIdOf = (item: Delivery) => (item.event as Partial<MessageReceivedEvent>).message?.id;

/**
 * The lanes of one bot: `admit` claims a delivery and starts its handling, whose `work` resolves once
 * its message was settled. @internal
 */
export function createLanes(o: LaneOptions) {
  const { store, policy, debug } = o;
  // How long a conversation's queue is kept: a queued item outlives any wait for the lock (the longest
  // handler plus a lock's expiry). Counted from the last enqueue, and from each holder's read that
  // found members left, so a backlog worked through for longer is kept while its holder lives.
  const queueTtlMs = o.maxHandlerMs + 2 * o.lockTtlMs + o.debounceMs;
  const pollMs = renewalEveryMs(o.lockTtlMs);
  // 'queue' runs the head alone and reads again after it (a retry of an earlier message queued
  // meanwhile comes next), so it reads only the head: a read costs one message whatever the backlog
  // (a read of the whole queue per message would make the store send the square of the backlog).
  // The others hand everything queued to one run.
  const limit = policy === 'queue' ? 1 : undefined;
  // Every run's lifetime under one timer, and every renewal of a lock or a claim under another;
  // neither keeps a Node process alive on its own.
  const lifetimes = createDeadlines(o.maxHandlerMs, false);
  // A run past maxHandlerMs gets one lock TTL more to end, its lock renewed all along.
  const graces = createDeadlines(o.lockTtlMs, false);
  const renewals = createDeadlines(pollMs, false);
  // The polls of the deliveries waiting on a held conversation; a pending delivery keeps Node alive.
  const polls = createDeadlines(pollMs, true);
  const holdClaims = createClaimHolds(store, o.lockTtlMs, renewals, (error) => o.report(error));
  // The deliveries of this process waiting on their outcome, by webhook id.
  const waiting = new Map<string, (outcome: BatchOutcome) => void>();
  // The members this process queued and still waits on: a holder here reads them back unparsed.
  const local = new Map<string, QueuedItem>();
  // The wake-ups of this process's waiters at the next release of a conversation's lock.
  const releases = new Map<string, Set<() => void>>();
  // Every run going on in this process, so a bot that closes can stop them at its deadline.
  const active = new Set<Run>();
  // Set by `close()`: holders let their conversation go after the run they are in, waiters leave.
  let closing = false;
  // 'queue' and 'interrupt' wait a bounded time for a missing predecessor ("Order with gaps" below); 'debounce' does not.
  const ordered = (policy === 'queue' || policy === 'interrupt') && o.gapWaitMs > 0;
  // A holder waiting for a missing predecessor reads its queue again this often, or at once when a
  // delivery of this process joins the conversation's queue.
  const gapPollMs = Math.min(pollMs, 500);
  const orderOptions = { store, waitMs: o.gapWaitMs, history: o.history, debug };
  // The holders of this process under 'queue' and 'interrupt', by conversation.
  const holders = new Map<string, GapHolder>();
  const joined = (conversationId: string) => {
    const holder = holders.get(conversationId);
    if (!holder) return;
    holder.joined = true;
    holder.wake?.();
  };

  const notifyReleased = (conversationId: string) => {
    const wakers = releases.get(conversationId);
    releases.delete(conversationId);
    for (const wake of wakers ?? []) wake();
  };

  /** Registers a wait for the conversation's next release, before the lock is tried (so none is missed). */
  const nextRelease = (conversationId: string) => {
    let wake!: () => void;
    const released = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const wakers = releases.get(conversationId) ?? new Set<() => void>();
    releases.set(conversationId, wakers);
    wakers.add(wake);
    const cancel = () => {
      wakers.delete(wake);
      if (wakers.size === 0 && releases.get(conversationId) === wakers) releases.delete(conversationId);
    };
    return { released, wake, cancel };
  };

  /**
   * A holder's pause for a missing predecessor, its batch's claims kept alive: none when a delivery here
   * joined the queue since the holder's last read, cut short when one joins meanwhile.
   */
  const pauseForGap = async (conversationId: string, items: readonly Delivery[], ms: number) => {
    const holder = holders.get(conversationId);
    if (!holder || holder.joined) return;
    const letGo = holdClaims(items.map((item) => item.webhookId));
    const woken = new AbortController();
    holder.wake = () => woken.abort();
    try {
      await sleep(Math.min(ms, gapPollMs), woken.signal).catch(() => {});
    } finally {
      holder.wake = undefined;
      letGo();
    }
  };

  const renew = (hold: Hold) => {
    hold.renewal = undefined;
    if (hold.loss || hold.stopped) return;
    const sent = Date.now();
    store.renewLock(hold.lock, o.lockTtlMs).then(
      (held) => {
        if (held) hold.confirmed = sent;
        else loseHold(hold);
      },
      (error: unknown) => {
        // A store hiccup is not a lost lock: it is still ours for a TTL from its last confirmation, so
        // the next renewal tries again while that covers it. Past that, nothing proves it is ours.
        if (Date.now() + pollMs < hold.confirmed + o.lockTtlMs) {
          debug?.('lock renewal failed: trying again at the next renewal', { error: String(error) });
        } else loseHold(hold);
      },
    );
    hold.renewal = renewals.add(renew, hold);
  };

  /** Past maxHandlerMs: the run's signal fires, and its grace starts (its holder keeps renewing). */
  const expire = (run: Run) => {
    stopRun(run, 'expired');
    run.grace = graces.add((late: Run) => late.overdue?.(), run);
  };

  /**
   * Counts a failed run of each of the batch's messages and answers the ids given up, each reported:
   * all of them for a run that would not stop (`unresponsive`: it may still be running, so it must
   * never run again), else those whose runs failed `maxAttempts` times.
   */
  const giveUp = async (items: readonly Delivery[], cause: unknown, unresponsive: boolean) => {
    const given = new Set<string>();
    for (const item of items) {
      // Counted where every instance sees it, as long as the retries last.
      const attempts = await store.increment(`attempts:${item.webhookId}`, DEDUPE_RETENTION_MS);
      if (!unresponsive && attempts < o.maxAttempts) continue;
      given.add(item.webhookId);
      const reason = unresponsive ? 'unresponsive' : 'attempts';
      const { webhookId } = item;
      debug?.('message given up', { webhookId, attempts, reason });
      o.report(
        new MessageGivenUpError({ webhookId, messageId: messageIdOf(item), attempts, reason, cause }),
        item.event,
        webhookId,
      );
    }
    return given;
  };

  /**
   * Runs a batch's handlers and releases its claims when it failed, so the service's retry runs it.
   * An interrupted run counts as done (the newer message answers it); one stopped for a lost lock or
   * its lifetime counts as failed, since its reply was cut. A failed run counts an attempt of each
   * message: one tried `maxAttempts` times, or every one of a run still going at the end of its grace,
   * is given up (`run.givenUp`; 'ok' when the whole batch is). Done marks are the caller's to write.
   * Never rejects.
   */
  const execute = async (run: Run): Promise<BatchOutcome> => {
    const { items } = run;
    const last = items.at(-1);
    // The runner answers for these claims while it runs them (their delivering processes may be gone).
    const letGo = holdClaims(items.map((item) => item.webhookId));
    const lifetime = lifetimes.add(expire, run);
    active.add(run);
    debug?.('run started', { webhookId: last?.webhookId, messages: items.length });
    // The run's end, or its being overdue, whichever comes first: one promise settled by either.
    const ended = await new Promise<'overdue' | { error: unknown; threw: boolean }>((resolve) => {
      run.overdue = () => resolve('overdue');
      o.run(items, run.controller.signal).then(
        () => resolve(RAN),
        (error: unknown) => resolve({ error, threw: true }),
      );
    });
    lifetimes.remove(lifetime);
    active.delete(run);
    if (run.grace) graces.remove(run.grace);
    let ok = true;
    let failure: unknown;
    if (ended === 'overdue') {
      // Still running past its signal and grace: its replies are refused, its outcome not awaited.
      ok = false;
      failure = stopError(run.stop ?? 'expired');
    } else if (ended.threw) {
      ok = false;
      failure = ended.error;
      if (run.stop !== 'interrupted') o.report(failure, last?.event, last?.webhookId);
    }
    if (run.stop === 'interrupted') ok = true;
    else if (run.stop !== undefined) {
      if (ok) {
        failure = stopError(run.stop);
        o.report(failure, last?.event, last?.webhookId);
      }
      ok = false;
    }
    debug?.('run ended', {
      webhookId: last?.webhookId,
      outcome: ok ? 'ok' : 'failed',
      ...(run.stop ? { stopped: run.stop } : {}),
      ...(ended === 'overdue' ? { overdue: true } : {}),
    });
    try {
      if (!ok && causedByStore(failure)) {
        // The store failed under the handler (a reply's lease, a session): not the message's fault, so
        // no attempt is counted and it stays at the head of its queue for the next holder, as a lost
        // lock leaves it; its claim is freed for the service's retry.
        for (const item of items) await releaseClaim(store, item.webhookId);
        debug?.('run failed on the store: left queued', { webhookId: last?.webhookId });
        return 'store_failed';
      }
      if (!ok) {
        // A shutdown is not the message's failure: it is left for the retry, never given up.
        const given =
          run.stop === 'closed' ? new Set<string>() : await giveUp(items, failure, ended === 'overdue');
        for (const item of items) if (!given.has(item.webhookId)) await releaseClaim(store, item.webhookId);
        if (given.size < items.length)
          debug?.('claim released for the retry', { webhookId: last?.webhookId });
        run.givenUp = given;
        ok = given.size === items.length;
      }
    } catch (error) {
      run.givenUp = undefined;
      o.report(error, last?.event, last?.webhookId);
      return 'store_failed';
    } finally {
      letGo();
    }
    return ok ? 'ok' : run.stop === 'closed' ? 'closed' : 'failed';
  };

  /** A delivery of no conversation lane ('concurrent', or not a message): run, then marked done. */
  const runAlone = async (delivery: Delivery): Promise<BatchOutcome> => {
    const run: Run = {
      items: [delivery],
      controller: new AbortController(),
      stop: undefined,
      hold: undefined,
    };
    const outcome = await execute(run);
    if (outcome !== 'ok') return outcome;
    try {
      await writeMarks(store, [doneWrite(delivery.webhookId)]);
      return outcome;
    } catch (error) {
      o.report(error, delivery.event, delivery.webhookId);
      return 'store_failed';
    }
  };

  /**
   * The queued members to run now, parsed, without those already done: a holder that completed them
   * died before removing them, or a retry queued one again after it was done, or this holder handled
   * its id already (`ran`). `fresh` is the caller's own member when no other holder can have run it
   * yet, which needs no look; so does a member already run here. Skipped members go to `settled`, to
   * be removed by the next read. Answered at once unless a member needed a look in the store.
   */
  const runnable = (
    members: string[],
    fresh: string | undefined,
    ran: ReadonlySet<string>,
    settled: string[],
    batch: Batch = [],
  ): Batch | Promise<Batch> => {
    for (let i = 0; i < members.length; i += 1) {
      const member = members[i]!;
      const item = local.get(member) ?? readMember(member);
      if (!item) {
        // Not a message this bot could have queued (a store shared with something else): dropped.
        o.report(new TypeError(`a queued member is not a message.received delivery: ${member.slice(0, 80)}`));
        settled.push(member);
      } else if (ran.has(item.webhookId)) settled.push(member);
      else if (member === fresh) batch.push({ member, item });
      else {
        // A look at its claim, then the rest of the members.
        const { webhookId } = item;
        return claimState(store, webhookId).then((state) => {
          if (state === 'done') {
            debug?.('queued message already handled: dropped from the queue', { webhookId });
            settled.push(member);
            waiting.get(webhookId)?.('ok');
          } else batch.push({ member, item });
          return runnable(members.slice(i + 1), fresh, ran, settled, batch);
        });
      }
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
    admitted?: Admitted,
  ): Promise<'drained' | 'busy' | 'stopped' | 'closed'> => {
    const lock = admitted?.lock ?? (await store.acquireLock(lockKey(conversationId), o.lockTtlMs));
    if (!lock) return 'busy';
    debug?.('lock taken', { conversationId });
    // No other holder that read the caller's delivery can have let its lock expire before now.
    const freshMember = fresh && Date.now() < fresh.until ? fresh.member : undefined;
    const ran = new Set<string>();
    const hold: Hold = {
      lock,
      confirmed: Date.now(),
      loss: undefined,
      stopped: false,
      renewal: undefined,
      running: undefined,
    };
    hold.renewal = renewals.add(renew, hold);
    const order = ordered ? new ConversationOrder(orderOptions, conversationId, admitted) : undefined;
    const holder: GapHolder = { joined: false, wake: undefined };
    if (order) holders.set(conversationId, holder);
    let unsubscribe: (() => Promise<void>) | undefined;
    let result: 'drained' | 'stopped' | 'closed' = 'stopped';
    // What the next settle records (done marks, members to remove) and the runs it answers for: a
    // delivery hears its outcome only once that outcome is in the store.
    let marks: DedupeWrite[] = [];
    let settled: string[] = [];
    let told: { items: readonly Delivery[]; outcome: BatchOutcome }[] = [];
    const tell = (instead?: BatchOutcome) => {
      for (const { items, outcome } of told) {
        for (const item of items) waiting.get(item.webhookId)?.(instead ?? outcome);
      }
      told = [];
    };
    try {
      if (policy === 'interrupt') {
        unsubscribe = await store.subscribe(`interrupt:${conversationId}`, (message) => {
          const { running } = hold;
          if (running && Number(message) > sequenceOf(running.items.at(-1))) {
            debug?.('run interrupted by a newer message', { conversationId, sequence: message });
            stopRun(running, 'interrupted');
          }
          joined(conversationId);
        });
      }
      let members = admitted?.queued;
      while (!hold.loss) {
        if (policy === 'debounce') {
          await sleep(o.debounceMs, undefined);
          members = undefined;
        }
        if (members === undefined) {
          const request: SettleRequest = {
            lock,
            lockTtlMs: o.lockTtlMs,
            queueTtlMs,
            marks,
            settled,
            queue: queueKey(conversationId),
            released: { channel: `released:${conversationId}`, message: '' },
            limit,
          };
          holder.joined = false;
          const answer = store.settle(request);
          const next = pending(answer) ? await answer : answer;
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
        if (closing) {
          // The bot is closing: the conversation goes to the next holder after the run it was in,
          // with what is left in its queue, in order.
          await store.releaseLock(lock);
          await store.publish(`released:${conversationId}`, '');
          result = 'closed';
          break;
        }
        const read = runnable(members, freshMember, ran, settled);
        const batch = pending(read) ? await read : read;
        members = undefined;
        if (batch.length === 0) continue;
        const items = batch.map(({ item }) => item);
        if (order) {
          const waiting = order.wait(items.map(sequenceOf), items[0]?.event.agentId ?? '');
          const waitMs = typeof waiting === 'number' ? waiting : await waiting;
          if (waitMs > 0) {
            // Read again after the pause: the missing message may be queued by then (or the bot closing).
            if (!closing) await pauseForGap(conversationId, items, waitMs);
            continue;
          }
        }
        const run: Run = { items, controller: new AbortController(), stop: undefined, hold };
        hold.running = run;
        const outcome = await execute(run);
        hold.running = undefined;
        // Handled, or given up: settled as done, whatever became of the rest of the batch.
        const done = outcome === 'ok' ? items : items.filter((item) => run.givenUp?.has(item.webhookId));
        const rest = outcome === 'ok' ? [] : items.filter((item) => !done.includes(item));
        told.push({ items: done, outcome: 'ok' }, { items: rest, outcome });
        // A failed one may come back with its retry; a done one is not run again by this holder.
        for (const item of done) ran.add(item.webhookId);
        // A failed store leaves the message unsettled, a lost lock leaves it queued for the next holder.
        if (outcome === 'store_failed') break;
        for (const item of done) marks.push(doneWrite(item.webhookId));
        // A holder whose lock lapsed records no order: the next holder may have run past it.
        const mark = hold.loss
          ? undefined
          : order?.ran(done.map(sequenceOf), outcome === 'failed' ? rest.map(sequenceOf) : []);
        if (mark) marks.push(mark);
        if (hold.loss) break;
        // A run stopped by the bot's close stays at the head of the queue for the next holder.
        if (outcome !== 'closed') settled.push(...batch.map(({ member }) => member));
      }
      // Stopped after a run that succeeded (its lock lost since): its done marks still count.
      if (marks.length > 0) await writeMarks(store, marks);
      tell();
    } catch (error) {
      tell('store_failed'); // whether the failed step recorded them is unknown: the retries decide
      throw error;
    } finally {
      hold.stopped = true;
      if (holders.get(conversationId) === holder) holders.delete(conversationId);
      if (hold.renewal) renewals.remove(hold.renewal);
      if (unsubscribe) await unsubscribe().catch((error: unknown) => o.report(error));
      // Released (and published) by the settle that found the queue empty; a holder that stopped
      // mid-way lets its lock expire, so no one mistakes what it left queued for a fresh delivery.
      if (result !== 'stopped') notifyReleased(conversationId);
      debug?.(result === 'drained' ? 'queue empty: lock released' : 'holder stopped: lock left to expire', {
        conversationId,
        ...(hold.loss ? { why: hold.loss } : {}),
      });
    }
    return result;
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
    admitted: Admitted | undefined,
    told: (outcome: BatchOutcome) => void,
  ): Promise<BatchOutcome> => {
    const conversationId = item.event.conversationId;
    let outcome: BatchOutcome | undefined;
    let next: ReturnType<typeof nextRelease> | undefined;
    // Its outcome ends its wait, if it waits.
    waiting.set(item.webhookId, (value) => {
      outcome = value;
      told(value);
      next?.wake();
    });
    local.set(member, item);
    let letGo: (() => void) | undefined;
    let unsubscribe: (() => Promise<void>) | undefined;
    try {
      let interrupted = false;
      let requeued = false;
      // The first try of the lock was the admit's; when it won, nothing needs to wait (yet).
      let held = admitted ? await drain(conversationId, fresh, admitted) : 'busy';
      for (;;) {
        if (outcome !== undefined) return outcome;
        if (closing && !runningHere(item.webhookId)) {
          // Left queued for the next holder; the claim is freed so the service's retry takes it in.
          await releaseClaim(store, item.webhookId);
          debug?.('left for another instance: the bot is closing', { webhookId: item.webhookId });
          return 'closed';
        }
        // We emptied the queue without meeting our item: a holder settled it and removed it. Its
        // dedupe record tells how: done (200), or failed (500: the service's retry runs it again).
        if (held === 'drained') {
          const state = await claimState(store, item.webhookId);
          if (state !== 'in_flight' || requeued) return state === 'done' ? 'ok' : 'failed';
          // Still our claim, yet our member is gone: a holder's run of the same message failed and
          // freed the claim, we took it (a retry waiting on that run, delivery.ts), and its settle
          // then removed the member we had queued again. Nobody runs it now: queue it once more.
          debug?.('queued again: its member was settled by a failed run', { webhookId: item.webhookId });
          requeued = true;
          await store.enqueue(queueKey(conversationId), member, sequenceOf(item), queueTtlMs);
          next?.cancel();
          next = nextRelease(conversationId);
          held = await drain(conversationId, undefined);
          continue;
        }
        // This process answers for the claim while it waits: were it to die, the claim expires soon.
        letGo ??= holdClaims([item.webhookId]);
        if (!unsubscribe) {
          debug?.('waiting: the conversation is held', { webhookId: item.webhookId, conversationId });
          // A holder here waiting for a missing predecessor reads the queue again: this may be it.
          joined(conversationId);
          // Then try once more at once: the holder may have released before we listened.
          unsubscribe = await store.subscribe(`released:${conversationId}`, () => next?.wake());
        } else {
          if (held === 'busy' && policy === 'interrupt' && !interrupted) {
            interrupted = true;
            await store.publish(`interrupt:${conversationId}`, String(sequenceOf(item)));
          }
          // Woken by its outcome, by the release, or by the poll (a holder that died releases nothing).
          // `next` was made before the last try of the lock.
          const poll = polls.add(next!.wake, undefined);
          await next!.released;
          polls.remove(poll);
          next!.cancel();
          if (outcome !== undefined) return outcome;
        }
        // Listen before trying, so a release between the try and the wait is not missed.
        next = nextRelease(conversationId);
        held = await drain(conversationId, fresh);
      }
    } catch (error) {
      o.report(error);
      return outcome ?? 'store_failed';
    } finally {
      letGo?.();
      waiting.delete(item.webhookId);
      local.delete(member);
      next?.cancel();
      if (unsubscribe) await unsubscribe().catch((error: unknown) => o.report(error));
    }
  };

  /**
   * The admission of a claimed delivery whose handling (`start`) may go on after its own outcome:
   * `work` resolves at the first `told` (or with the handling's end), `drained` with its end. A
   * delivery whose outcome was not recorded (the store failed) has its claim released where the store
   * allows, so the retry runs it.
   */
  const claimed = (
    webhookId: string,
    start: (told: (outcome: BatchOutcome) => void) => Promise<BatchOutcome>,
  ): Admission => {
    let resolve!: (outcome: BatchOutcome | Promise<BatchOutcome>) => void;
    const work = new Promise<BatchOutcome>((settle) => {
      resolve = settle;
    });
    // The first outcome counts; one not recorded releases the claim before it is answered.
    let known = false;
    const told = (value: BatchOutcome) => {
      if (known) return;
      known = true;
      resolve(
        value === 'store_failed'
          ? releaseClaim(store, webhookId).then(
              () => value,
              () => value,
            )
          : value,
      );
    };
    const drained = start(told)
      .then(told, (error: unknown) => {
        o.report(error);
        told('store_failed');
      })
      .then(() => work);
    return { claim: 'claimed', work, drained };
  };

  /**
   * Admits a delivery in one store step: its claim and, for a conversation's message under a lock
   * policy, its place in the queue, a try of the lock and, when won, the read. `text` is the verified
   * body, queued as it came (no second serialization of the event). Rejects only when the store
   * failed before anything was claimed.
   */
  const admit = (delivery: Delivery, text: string): StoreAnswer<Admission> => {
    const { webhookId, event } = delivery;
    // Alive one lock TTL unless renewed.
    const claim = { key: dedupeKey(webhookId), value: 'in_flight', ttlMs: o.lockTtlMs };
    if (policy === 'concurrent' || event.type !== 'message.received') {
      return claimOnce(store, claim).then((taken) => {
        if (!taken.claimed) return refused(webhookId, taken.current);
        debug?.('claimed', { webhookId, type: event.type });
        return claimed(webhookId, () => runAlone(delivery));
      });
    }
    const item = delivery as QueuedItem;
    const conversationId = item.event.conversationId;
    const member = queueMember(webhookId, text);
    // The store's own step (the BotStore contract, src/store/compound.ts), awaited only when pending.
    const answer = store.admit({
      claim,
      queue: { key: queueKey(conversationId), member, score: sequenceOf(item), ttlMs: queueTtlMs },
      lock: { key: lockKey(conversationId), ttlMs: o.lockTtlMs },
      limit,
      // A holder that runs in order reads its conversation's order record first: read with the queue.
      read: ordered ? orderKey(conversationId) : undefined,
    });
    return pending(answer)
      ? answer.then((admitted) => queued(item, member, admitted))
      : queued(item, member, answer);
  };

  /** A refused claim: its value says done, or in flight (a value that vanished meanwhile too). */
  const refused = (webhookId: string, current: string | undefined): Admission => {
    const claim = current === 'done' ? 'done' : 'in_flight';
    debug?.('duplicate', { webhookId, claim });
    return { claim };
  };

  /** A conversation's message once its admit answered: refused, or claimed and followed to its outcome. */
  const queued = (item: QueuedItem, member: string, admitted: AdmitResult): Admission => {
    const { webhookId } = item;
    if (!admitted.claimed) return refused(webhookId, admitted.current);
    const conversationId = item.event.conversationId;
    debug?.('claimed and queued', { webhookId, conversationId, lock: admitted.lock ? 'taken' : 'held' });
    const fresh = { member, until: Date.now() + o.lockTtlMs };
    const held = admitted.lock ? admitted : undefined;
    return claimed(webhookId, (told) => follow(item, member, fresh, held, told));
  };

  /** True while a run of this process holds the delivery. */
  const runningHere = (webhookId: string) =>
    [...active].some((run) => run.items.some((item) => item.webhookId === webhookId));

  /** No more runs start here: holders let their conversation go after their run, waiters leave. */
  const close = () => {
    closing = true;
    for (const conversationId of [...releases.keys()]) notifyReleased(conversationId);
    for (const holder of holders.values()) holder.wake?.();
  };

  /** Fires the signal of every run still going (the close's deadline passed): their replies end marked. */
  const stopAll = () => {
    for (const run of active) stopRun(run, 'closed');
  };

  return { admit, close, stopAll };
}

// Order with gaps, under 'queue' and 'interrupt': a message runs only once every user message before it
// in its conversation ran, or once it waited `gapWaitMs` for the missing ones.
//
// `sequence` counts every message of a conversation (PROTOCOL.md section 7): the user's, the agent's
// own replies, other agents' messages and unsent tombstones. The store keeps, per conversation, the
// highest sequence run (`order:{conversationId}`, written by the settle that records the run, kept as
// long as the service's retries last). A holder about to run sequence `top` looks at the sequences
// between that record and `top` that are not queued: a user message among them is a delivery that
// failed or has not come yet (the service retries 5 s after a failed attempt). One history read
// (`GET /v1/conversations/{id}/messages?before_sequence=top&limit=n`) per gap tells them apart: the
// agent's own messages, other agents' messages (never delivered) and tombstones are no gap; a user's
// message is, and the holder waits for it, reading the queue again, at most `gapWaitMs` from when it
// saw the gap. Then the message runs and the gap is given up (debug log, `order.gaps` metric): a
// missing message that comes later still runs, after its successor. A run that failed is a gap too,
// awaiting its retry: its holder knows it without a history read, and a first run that failed sets
// the record below its sequence.
//
// No record (the first message a bot sees in a conversation, or one idle past the retention) means no
// wait. The record is written by the lock's holder; a holder whose lock lapsed before it noticed may set it
// back, and the next gap then costs one history read and, at worst, one bounded wait.

/**
 * How long a message waits for a missing predecessor, by default: the service's 10 s delivery timeout
 * plus its 5 s first retry, so a predecessor whose first attempt failed in any way arrives within it.
 */
export const DEFAULT_GAP_WAIT_MS = 15_000;

/** The most sequences one history read looks at (the service's page limit). */
const MAX_GAP = 100;

/** How long the highest sequence run of a conversation is kept: the service's whole retry schedule. */
const ORDER_RETENTION_MS = 18 * 60 * 60 * 1000;

/** The store key of a conversation's highest sequence run. @internal */
export const orderKey = (conversationId: string) => `order:${conversationId}`;

/** One page of a conversation's history, newest first. @internal */
export type HistoryPage = (
  conversationId: string,
  query: { before_sequence: number; limit: number },
  signal: AbortSignal,
) => Promise<readonly Message[]>;

/** What a conversation's order needs from the bot. @internal */
export interface OrderOptions {
  store: BotStore;
  /** How long a message waits for a missing predecessor (`gapWaitMs`). */
  waitMs: number;
  history: HistoryPage;
  debug: DebugLog | undefined;
}

/** True for a message no delivery will bring: the agent's own, another agent's, or a tombstone. */
const noDelivery = (message: Message, agentId: string) =>
  message.status === 'deleted' || message.sender.id === agentId || !message.sender.id.startsWith('usr_');

/** The record as the store keeps it: `undefined` for none (or not a sequence). */
const readRecord = (value: string | undefined) => {
  const read = value === undefined ? Number.NaN : Number(value);
  return Number.isSafeInteger(read) ? read : undefined;
};

/**
 * A conversation's order while one holder holds its lock: `wait` answers how long its next run must
 * still wait for a missing predecessor (0: run now), `ran` records a run and answers the store mark
 * for the settle. `admitted`: the record as the admit that took the lock read it (else read at once
 * when first needed). A class, and its sets made at the first gap: one is made per holding, on every
 * delivery's path. @internal
 */
export class ConversationOrder {
  readonly #o: OrderOptions;
  readonly #conversationId: string;
  // The highest sequence run; `null` until read from the store, `undefined` when it has none.
  #last: number | undefined | null;
  // Sequences no delivery will bring (history said so, or their wait was given up).
  #settled: Set<number> | undefined;
  // User messages still to come: history said so, or their run failed and awaits its retry. A
  // sequence history was read for is in one of the two sets, so a gap is read once.
  #pending: Set<number> | undefined;
  // When the gap seen is given up, and whether a user message is known missing (waited for).
  #deadline: number | undefined;
  #waiting = false;

  constructor(o: OrderOptions, conversationId: string, admitted?: { value?: string | undefined }) {
    this.#o = o;
    this.#conversationId = conversationId;
    // A store's own admit that does not know `read` answers no `value`: the record is read then.
    this.#last = admitted && 'value' in admitted ? readRecord(admitted.value) : null;
  }

  /** How long the run of `sequences` must still wait; at once (no promise) when nothing is missing. */
  wait(sequences: readonly number[], agentId: string): number | Promise<number> {
    const last = this.#last;
    if (last === null) {
      return this.#o.store.get(orderKey(this.#conversationId)).then((value) => {
        this.#last = readRecord(value);
        return this.wait(sequences, agentId);
      });
    }
    if (last === undefined || sequences.length === 0) return 0;
    const top = Math.max(...sequences);
    // The run follows the record: nothing can be missing, and no gap is being waited for.
    if (top <= last + 1 && this.#deadline === undefined) return 0;
    return this.#check(last, top, new Set(sequences), agentId);
  }

  /** The settle's store write for a run: the highest sequence run. */
  ran(done: readonly number[], failed: readonly number[]) {
    // A first run that failed: the record starts below it, so its successors wait for its retry.
    const first = this.#last == null && failed.length > 0;
    if (first) this.#last = Math.min(...failed) - 1;
    if (failed.length > 0) this.#pending ??= new Set();
    for (const sequence of failed) this.#pending?.add(sequence);
    for (const sequence of done) this.#pending?.delete(sequence);
    // Only a run that moved the record writes it: a failed run behind a record leaves the store's as it
    // is, which another holder may have moved on since (this one's lock lapsed mid-run).
    if (done.length === 0 && !first) return undefined;
    const last = Math.max(this.#last ?? 0, ...done);
    this.#last = last;
    return { key: orderKey(this.#conversationId), value: String(last), ttlMs: ORDER_RETENTION_MS };
  }

  #missingBelow(floor: number, top: number, queued: ReadonlySet<number>) {
    const missing: number[] = [];
    for (let sequence = Math.max(floor + 1, top - MAX_GAP); sequence < top; sequence += 1) {
      if (!queued.has(sequence) && !this.#settled?.has(sequence)) missing.push(sequence);
    }
    return missing;
  }

  /** The run of `top` after the record `floor`: a history read for what is missing, then the wait left. */
  async #check(floor: number, top: number, queued: ReadonlySet<number>, agentId: string) {
    const o = this.#o;
    const conversationId = this.#conversationId;
    let missing = this.#missingBelow(floor, top, queued);
    // The bound counts from the gap's first sight, its history read included.
    if (missing.length > 0) {
      this.#deadline ??= Date.now() + o.waitMs;
      await this.#look(missing, top, agentId, this.#deadline - Date.now());
      missing = this.#missingBelow(floor, top, queued);
    }
    if (missing.length === 0) {
      if (this.#waiting) recordMetric('order.gaps', 1, { outcome: 'arrived' });
      this.#deadline = undefined;
      this.#waiting = false;
      return 0;
    }
    const now = Date.now();
    if (!this.#waiting) {
      this.#waiting = true;
      o.debug?.('waiting for a missing message', {
        conversationId,
        sequence: top,
        missing,
        waitMs: o.waitMs,
      });
    }
    // Set above whenever anything is missing.
    const until = this.#deadline ?? now;
    if (now < until) return until - now;
    // The bound: the message runs, and the missing ones are no longer waited for.
    o.debug?.('gave up waiting for a missing message: ran out of order', {
      conversationId,
      sequence: top,
      missing,
    });
    recordMetric('order.gaps', 1, { outcome: 'given_up' });
    this.#settled ??= new Set();
    for (const sequence of missing) {
      this.#settled.add(sequence);
      this.#pending?.delete(sequence);
    }
    this.#deadline = undefined;
    this.#waiting = false;
    return 0;
  }

  /** Reads history once for the sequences not looked at yet; what it cannot tell counts as no gap. */
  async #look(missing: number[], top: number, agentId: string, withinMs: number) {
    this.#pending ??= new Set();
    this.#settled ??= new Set();
    const pending = this.#pending;
    const settled = this.#settled;
    const unread = missing.filter((sequence) => !pending.has(sequence));
    if (unread.length === 0) return;
    const conversationId = this.#conversationId;
    let page: readonly Message[];
    try {
      const query = { before_sequence: top, limit: top - Math.min(...unread) };
      page = await this.#o.history(conversationId, query, AbortSignal.timeout(Math.max(1, withinMs)));
    } catch (error) {
      // Unknown: each is waited for, within the same bound.
      this.#o.debug?.('history read failed: waiting for the missing sequences', { conversationId, error });
      for (const sequence of unread) pending.add(sequence);
      return;
    }
    const bySequence = new Map(page.map((message) => [message.sequence, message]));
    for (const sequence of unread) {
      const message = bySequence.get(sequence);
      if (message && !noDelivery(message, agentId)) pending.add(sequence);
      else settled.add(sequence);
    }
  }
}
