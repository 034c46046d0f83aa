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
// wait. The record is written by the lock's holder, so a holder that lost its lock may set it back;
// the next gap then costs one history read and, at worst, one bounded wait.

import type { Message } from '../schemas/messages.js';
import type { BotStore } from '../store/bot-store.js';
import { metric } from '../telemetry.js';
import type { DebugLog } from './lanes.js';

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
      if (this.#waiting) metric.gap('arrived');
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
    metric.gap('given_up');
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
