// How a question lives in the bot store, so that any instance, a restarted one or a new deploy, can
// take its answer or fire its timeout. Three kinds of keys, all through the BotStore interface:
//
//   question:{conversationId}   the conversation's current question (one at a time): its name, the
//                               author's state, the messages that asked it, its deadline. Asking
//                               again replaces it.
//   question-end:{questionId}   how the question ended, written once with setIfAbsent: the webhook id
//                               of the answer that won, or `timeout`. This write is the exactly-once
//                               claim: an answer and a timeout, two clicks, two instances race for it
//                               and one wins. A run that won and then failed finds its own claim on
//                               the retry (same webhook id) and runs again; nobody else does.
//   questions-due:{minute}      the due index: a queue per minute of deadlines, each member one
//                               question's deadline, conversation and id, scored by the deadline.
//   questions-due-from          the first minute that may still hold a member: the timer reads the
//                               minutes from there to now, so an idle bot costs one read per tick
//                               and a bot that was down for a while catches up with what fell due.
//
// A question's id is the id of the message that asked it: a redelivery of the asking run replays
// that message (same Idempotency-Key), so it finds the same id and does not ask twice.

import type { BotStore } from '../store/bot-store.js';
import type { BotReplyOptions } from './bot-types.js';
import type { QuickReply } from './rich-replies.js';

/** The author's state attached to a question, returned with its answer or timeout: any JSON object. */
export type QuestionState = Record<string, unknown>;

/** The end claim's `by` when the timeout won. @internal */
export const BY_TIMEOUT = 'timeout';

/** How long an ended question, and its end claim, are kept: longer than the service's retries (17 h 35 min). */
export const ENDED_RETENTION_MS = 24 * 60 * 60 * 1000;
/** How long past its deadline a question (and its minute of the index) waits for a bot to fire it. */
export const DUE_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/** The longest `timeoutMs` a question may have, and how long one with no timeout stays pending. */
export const MAX_QUESTION_TIMEOUT_MS = 30 * 24 * 60 * 60 * 1000;

/** One minute of deadlines per queue: a tick reads the current minute and any before it not yet emptied. */
const MINUTE_MS = 60_000;
/**
 * A minute is passed over for good (the cursor moves past it) only this long after it ended: a
 * question asked just before a tick, whose enqueue reached the store after that tick read its minute
 * (a slow store, clocks a little apart), is still found. Its own deadline is at least its timeout
 * after the ask, so a minute this old can only gain a member from an enqueue slower than this.
 */
const CURSOR_GRACE_MS = 2 * MINUTE_MS;
/** The cursor outlives the longest pending question. */
const CURSOR_TTL_MS = MAX_QUESTION_TIMEOUT_MS + DUE_RETENTION_MS;
/** At most this many minutes read per tick while catching up; the next tick goes on. */
const MINUTES_PER_TICK = 120;

/** The conversation's current question, as stored. @internal */
export interface Asked {
  /** The id of the message that asked it. */
  id: string;
  name: string;
  state: QuestionState;
  conversationId: string;
  /** The question's text, for a re-ask. */
  text: string;
  quickReplies?: QuickReply[];
  /** Epoch ms on the bot's clock; none for a question without `timeoutMs`. */
  deadline?: number;
  /** The question and its re-asks: a click on one of these is an answer to it. */
  messageIds: string[];
  /** How many bad answers it was re-asked for. */
  tries: number;
  /** The webhook id of the run that asked it (`timeout:{id}` for a timeout handler's ask). */
  askedBy: string;
  /** The question whose answer run asked this one: a retry of that run answers it again. */
  parent?: string;
  /** How it ended, once its handler finished: the answering webhook id, `timeout`, or `gave-up`. */
  ended?: string;
}

/** The one write that decides how a question ended. @internal */
export interface Ending {
  /** The webhook id of the answer that won, or {@link BY_TIMEOUT}. */
  by: string;
  /** What `onAnswer` gets (a choice, or the text a schema accepted): validated again on a retry. */
  input?: string;
  name: string;
  state: QuestionState;
  conversationId: string;
  questionId: string;
  /** A timeout run: until when its instance works on it (renewed while it runs); past it, another retakes it. */
  leaseUntil?: number;
  /** A timeout run: how many times it was started. */
  attempts?: number;
  /** Its handler finished (or gave up): nothing runs it again. */
  done?: boolean;
}

/** The end claim of question `asked` by `by`, with what else that ending holds. @internal */
export const endingOf = (asked: Asked, by: string, more: Partial<Ending> = {}): Ending => ({
  by,
  name: asked.name,
  state: asked.state,
  conversationId: asked.conversationId,
  questionId: asked.id,
  ...more,
});

/** How a question ended, as `metadata.question_end.outcome` of the messages its ending run sends. */
export type QuestionOutcome = 'answered' | 'timed_out' | 'gave_up' | 'cancelled';

/**
 * Reply options whose message says which question its run ended and how (`metadata.question_end`),
 * so whoever reads the conversation (the emulator) sees the end on the wire. @internal
 */
export const endMarked = (
  options: BotReplyOptions | undefined,
  id: string,
  outcome: QuestionOutcome,
): BotReplyOptions => ({ ...options, metadata: { ...options?.metadata, question_end: { id, outcome } } });

/** A due-index member: the deadline, conversation and question, read back without a store call. */
type DueMember = [deadline: number, conversationId: string, questionId: string];

const minuteOf = (ms: number) => Math.floor(ms / MINUTE_MS);
const dueKey = (minute: number) => `questions-due:${minute}`;
const CURSOR_KEY = 'questions-due-from';

/** The store steps of questions, over the BotStore interface only. @internal */
export function questionStore(store: BotStore) {
  const recordKey = (conversationId: string) => `question:${conversationId}`;
  const endKey = (questionId: string) => `question-end:${questionId}`;

  /** Moves the cursor back to `minute` when it is later (or absent), so the timer reads that minute. */
  const cursorAtMost = async (minute: number) => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const raw = await store.get(CURSOR_KEY);
      if (raw !== undefined && Number(raw) <= minute) return;
      if (await store.compareAndSet(CURSOR_KEY, raw, String(minute), CURSOR_TTL_MS)) return;
    }
  };

  /** The conversation's question and its raw value (for compare-and-set), if any. */
  const current = async (conversationId: string): Promise<{ raw: string; asked: Asked } | undefined> => {
    const raw = await store.get(recordKey(conversationId));
    return raw === undefined ? undefined : { raw, asked: JSON.parse(raw) as Asked };
  };
  /** Replaces the question's record when it is still `raw` (a re-ask, or its end); false otherwise. */
  const replace = (raw: string, next: Asked): Promise<boolean> => {
    const ttl = next.ended === undefined ? MAX_QUESTION_TIMEOUT_MS : ENDED_RETENTION_MS;
    return store.compareAndSet(recordKey(next.conversationId), raw, JSON.stringify(next), ttl);
  };

  /** Adds a question with a deadline to the due index (again, on a retry of its ask: the same member). */
  const index = async (asked: Asked, nowMs: number): Promise<void> => {
    if (asked.deadline === undefined) return;
    const minute = minuteOf(asked.deadline);
    const member: DueMember = [asked.deadline, asked.conversationId, asked.id];
    // Every member of a minute gets the same absolute expiry, whoever enqueues last.
    const keep = (minute + 1) * MINUTE_MS - nowMs + DUE_RETENTION_MS;
    await store.enqueue(dueKey(minute), JSON.stringify(member), asked.deadline, Math.max(keep, 1));
    await cursorAtMost(minute);
  };

  return {
    current,
    replace,
    /** Makes `asked` the conversation's question; with a deadline, adds it to the due index. */
    async put(asked: Asked, nowMs: number): Promise<void> {
      const ttl =
        asked.deadline === undefined
          ? MAX_QUESTION_TIMEOUT_MS
          : Math.max(asked.deadline - nowMs, 0) + DUE_RETENTION_MS;
      await store.set(recordKey(asked.conversationId), JSON.stringify(asked), ttl);
      await index(asked, nowMs);
    },
    index,
    /** Marks the conversation's question ended, when it is still question `questionId`. */
    async markEnded(conversationId: string, questionId: string, by: string): Promise<void> {
      const found = await current(conversationId);
      if (found?.asked.id !== questionId || found.asked.ended !== undefined) return;
      await replace(found.raw, { ...found.asked, ended: by });
    },

    /** How the question ended, and its raw value, if it did. */
    async ending(questionId: string): Promise<{ raw: string; ending: Ending } | undefined> {
      const raw = await store.get(endKey(questionId));
      return raw === undefined ? undefined : { raw, ending: JSON.parse(raw) as Ending };
    },
    /** The exactly-once claim: its raw value when this call decided how the question ends. */
    async claim(ending: Ending): Promise<string | undefined> {
      const raw = JSON.stringify(ending);
      return (await store.setIfAbsent(endKey(ending.questionId), raw, ENDED_RETENTION_MS)) ? raw : undefined;
    },
    /** Swaps the end claim when it is still `raw` (a timeout's lease renewed, retaken or done). */
    async swapEnding(raw: string, next: Ending): Promise<string | undefined> {
      const value = JSON.stringify(next);
      const swapped = await store.compareAndSet(endKey(next.questionId), raw, value, ENDED_RETENTION_MS);
      return swapped ? value : undefined;
    },

    /**
     * Walks the due index up to `nowMs`: calls `fire` for every member whose deadline passed (it
     * answers true once the question needs nothing more), removes those, and moves the cursor past
     * minutes that ended long enough ago and are empty.
     */
    async walkDue(
      nowMs: number,
      fire: (conversationId: string, questionId: string) => Promise<boolean>,
    ): Promise<void> {
      const raw = await store.get(CURSOR_KEY);
      if (raw === undefined) return; // nothing was ever asked with a timeout (or all of it is long gone)
      const start = Number(raw);
      let from = start;
      let cursor = raw;
      const last = minuteOf(nowMs);
      for (let minute = start; minute <= last && minute < start + MINUTES_PER_TICK; minute++) {
        const members = await store.readQueued(dueKey(minute));
        const finished: string[] = [];
        for (const member of members) {
          const [deadline, conversationId, questionId] = JSON.parse(member) as DueMember;
          if (deadline > nowMs) break; // scored by deadline: the rest are later still
          if (await fire(conversationId, questionId)) finished.push(member);
        }
        const left = finished.length > 0 ? await store.readQueued(dueKey(minute), finished) : members;
        // Only the cursor's own minute moves it, so every minute before the cursor is empty.
        if (minute === from && left.length === 0 && (minute + 1) * MINUTE_MS + CURSOR_GRACE_MS <= nowMs) {
          const next = String(minute + 1);
          if (!(await store.compareAndSet(CURSOR_KEY, cursor, next, CURSOR_TTL_MS))) return;
          cursor = next;
          from = minute + 1;
        }
      }
    },
  };
}

/** The store steps of questions. @internal */
export type QuestionStore = ReturnType<typeof questionStore>;
