// Questions to the user whose answer reaches the bot, whichever instance gets it and however long
// after: declared by name on the bot (`bot.question`), asked from a handler (`ctx.ask`), kept in the
// bot store, timed out by every instance's timer.
//
// The answer step runs before the routes for every user message of a bot that declared a question.
// It reads the conversation's current question (one store read) and takes the message as its answer
// when it is a click on that question's quick replies, or any other message but a registered command
// or a text the question lets through (`passThrough`). An answer is validated (a choice, a schema);
// a bad one is re-asked, at most `retries` times, after which the question ends unanswered and the
// message goes on to the routes. A good one claims the question's end (below), and the claim's
// winner runs `onAnswer`: two clicks, a click racing the timeout, two instances, one run.
//
// Question timeouts fire with no message: a timer every second (unref'd, so it never keeps a
// process alive) walks the due index and fires each question whose deadline passed. Every instance
// walks it; the end claim makes one of them, and only one, run the timeout, and never once an answer
// took the question. The instance that won holds a lease on it, renewed while `onTimeout` runs: if it
// dies, another retakes the timeout once the lease lapsed and runs it again; its replies carry keys
// derived from the question, so the retry replays what the first run posted instead of posting
// twice. A failed `onTimeout` is retried the same way, at most MAX_TIMEOUT_ATTEMPTS times. Runtimes
// without timers between requests call `bot.fireDueQuestions()` themselves (a Workers cron trigger).
//
// How questions live in the bot store, so that any instance, a restarted one or a new deploy, can
// take an answer or fire a timeout. Every step of a question is one compare-and-set of its
// conversation's record, read again and redone when another write came first:
//
//   question:{conversationId}   the conversation's current question (one at a time): its name, the
//                               author's state, the messages that asked it, its deadline; and how
//                               each of its questions of the last day ended, by question id: the
//                               webhook id of the answer that won, `timeout` (with the lease of the
//                               instance running it), or why it ended unanswered. An end is written
//                               once, only where none is: this is the exactly-once claim an answer
//                               and a timeout, two clicks, two instances race for. A run that won
//                               and then failed finds its own end on the retry (same webhook id) and
//                               runs again; nobody else does. Asking again replaces the current
//                               question and ends the one it replaces in the same write.
//   questions-due:{minute}      the due index: a queue per minute of deadlines, each member one
//                               question's deadline, conversation and id, scored by the deadline.
//   questions-due-from          the first minute that may still hold a member: the timer reads the
//                               minutes from there to now, so an idle bot costs one read per tick
//                               and a bot that was down for a while catches up with what fell due.
//
// A question's id is the id of the message that asked it: a redelivery of the asking run replays
// that message (same Idempotency-Key), so it finds the same id and does not ask twice.

import * as z from 'zod/mini';
import type { AgentClient } from '../client/agent-client.js';
import { ValidationError } from '../core/errors.js';
import { count, fn, text } from '../core/validate.js';
import { type FieldIssue, fieldIssues, safeParse } from '../schemas/issues.js';
import { renewalEveryMs } from '../store/bot-store.js';
import type { ReplySource } from '../streaming/pipe-reply.js';
import type { BotReplyOptions, BotReplyResult, BotRuntime, MessageContext } from './bot-types.js';
import { createReplies, type QuestionEnd, type QuickReply } from './context-reply.js';

/** The author's state attached to a question, returned with its answer or timeout: any JSON object. */
export type QuestionState = Record<string, unknown>;

/** The end claim's `by` when the timeout won. */
const BY_TIMEOUT = 'timeout';

/** How long an ended question, and its end claim, are kept: longer than the service's retries (17 h 35 min). */
const ENDED_RETENTION_MS = 24 * 60 * 60 * 1000;
/** The longest `timeoutMs` a question may have. */
const MAX_QUESTION_TIMEOUT_MS = 30 * 24 * 60 * 60 * 1000;
/**
 * How long a pending question, its minute of the due index and the index's cursor are kept after
 * their last write: the longest timeout, and a week past it for a bot to come and fire it.
 */
const PENDING_TTL_MS = MAX_QUESTION_TIMEOUT_MS + 7 * 24 * 60 * 60 * 1000;

/** One minute of deadlines per queue: a tick reads the current minute and any before it not yet emptied. */
const MINUTE_MS = 60_000;
/**
 * A minute is passed over for good (the cursor moves past it) only this long after it ended: a
 * question asked just before a tick, whose enqueue reached the store after that tick read its minute
 * (a slow store, clocks a little apart), is still found. Its own deadline is at least its timeout
 * after the ask, so a minute this old can only gain a member from an enqueue slower than this.
 */
const CURSOR_GRACE_MS = 2 * MINUTE_MS;
/** At most this many minutes read per tick while catching up; the next tick goes on. */
const MINUTES_PER_TICK = 120;

/** The conversation's current question, as stored. */
interface Asked {
  /** The id of the message that asked it. */
  id: string;
  name: string;
  state: QuestionState;
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
}

/** How a question ended: written once, where no end is. */
interface Ending {
  /** The webhook id of the answer that won, {@link BY_TIMEOUT}, or why it ended unanswered. */
  by: string;
  /** What `onAnswer` gets (a choice, or the text a schema accepted): validated again on a retry. */
  input?: string;
  name: string;
  state: QuestionState;
  /** Epoch ms when it ended: it is kept ENDED_RETENTION_MS after. */
  at: number;
  /** A timeout run: until when its instance works on it (renewed while it runs); past it, another retakes it. */
  leaseUntil?: number;
  /** A timeout run: how many times it was started. */
  attempts?: number;
  /** Its handler finished (or gave up): nothing runs it again. */
  done?: boolean;
}

/** A conversation's questions as stored: the current one, and how the recent ones ended. */
interface Stored {
  asked?: Asked;
  ends: Record<string, Ending>;
}

/** What a schema's check answers (Standard Schema's result: zod 4, valibot, arktype). */
export type AnswerCheck<A> =
  | { readonly value: A; readonly issues?: undefined }
  | { readonly issues: readonly { readonly message: string }[] };

/** A schema for a free-text answer: any Standard Schema, such as a zod 4 schema of the text. */
export interface AnswerSchema<A> {
  readonly '~standard': {
    readonly validate: (value: unknown) => AnswerCheck<A> | Promise<AnswerCheck<A>>;
  };
}

/**
 * A question declared with `bot.question(name, definition)`: how its answer is checked, and what
 * runs when it comes or when it does not.
 *
 * @example
 * bot.question('refund-confirm', {
 *   choices: ['yes', 'no'],
 *   timeoutMs: 10 * 60_000,
 *   onAnswer: (ctx, answer, state) => ctx.reply(answer === 'yes' ? `Refunded ${state.orderId}` : 'Kept.'),
 *   onTimeout: (ctx) => ctx.reply('No answer, so nothing was refunded.'),
 * });
 */
export interface QuestionDefinition<A = string, S extends QuestionState = QuestionState> {
  /** The answers taken (compared without case): a click's value or action id, or the text typed. */
  choices?: readonly string[];
  /** A schema of the answer's text (zod, or any Standard Schema); its output is the answer. */
  schema?: AnswerSchema<A>;
  /** How long the question waits for an answer, in milliseconds (at most 30 days); no timeout without it. */
  timeoutMs?: number;
  /** How many times a bad answer is re-asked before the question ends unanswered; 2 by default. */
  retries?: number;
  /** Said before the question when an answer is re-asked; the schema's message or the choices by default. */
  reask?: string;
  /**
   * Texts that are never an answer but go to the routes (a string is the whole trimmed text, any
   * case). Registered commands (`bot.command`) always go to their handlers.
   * @example passThrough: ['help', /^talk to a human/i]
   */
  passThrough?: readonly (string | RegExp)[];
  /** Runs once for the answer, with the answering message's context and the state given to `ask`. */
  onAnswer: (ctx: MessageContext, answer: A, state: S) => unknown;
  /** Runs once when `timeoutMs` passed with no answer, on one instance, with no message needed. */
  onTimeout?: (ctx: QuestionTimeoutContext, state: S) => unknown;
}

/** Options of `ctx.ask`. */
export interface AskOptions {
  /** What comes back with the answer or the timeout (any JSON object), such as `{ orderId }`. */
  state?: QuestionState;
  /** Buttons under the question; a click is an answer (its value, else its action id). */
  quickReplies?: readonly QuickReply[];
}

/** What a question's `onTimeout` receives: the conversation, and replies keyed on the question. */
export interface QuestionTimeoutContext {
  /** The conversation the question was asked in. */
  conversationId: string;
  /** The question: its id (the id of the message that asked it) and name. */
  question: { id: string; name: string };
  /** A client authenticated as the agent. */
  client: AgentClient;
  /** Fires when another instance took the timeout over (this one's claim lapsed). */
  signal: AbortSignal;
  /**
   * Replies to the question. The n-th reply's Idempotency-Key derives from the question's id, so a
   * timeout run again (its instance died, or it threw) replays what was posted instead of posting twice.
   */
  reply(text: string | ReplySource, options?: BotReplyOptions): Promise<BotReplyResult>;
  /** Asks another question, as `ctx.ask` does. */
  ask(name: string, text: string, options?: AskOptions): Promise<BotReplyResult>;
}

/** A verdict on an answer: what `onAnswer` gets, or why it was refused. */
type Verdict = { ok: true; input: string; answer: unknown } | { ok: false; issue?: string | undefined };

/** How often each instance walks the due index: a timeout fires within about this of its deadline. */
const QUESTION_TICK_MS = 1000;
/** How many times a timeout handler is started before it is given up (reported). */
const MAX_TIMEOUT_ATTEMPTS = 5;
/** How long after a failed timeout handler it is tried again. */
const RETRY_AFTER_MS = 5000;

/** What one look at a due question did. */
type FireResult = 'fired' | 'finished' | 'pending';

const same = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();
const GAVE_UP = 'gave-up';
const REPLACED = 'replaced';

/** A due-index member: the deadline, conversation and question, read back without a store call. */
type DueMember = [deadline: number, conversationId: string, questionId: string];

const minuteOf = (ms: number) => Math.floor(ms / MINUTE_MS);
const recordKey = (conversationId: string) => `question:${conversationId}`;
const dueKey = (minute: number) => `questions-due:${minute}`;
const CURSOR_KEY = 'questions-due-from';

/**
 * What `bot.question` checks of a definition before it is declared, naming each bad field. Made at the
 * first declaration, so an app that imports only the client bundles none of it.
 */
function definitionSchema() {
  return z.object({
    onAnswer: fn(),
    onTimeout: z.optional(fn()),
    timeoutMs: z.optional(
      z.int().check(z.positive(), z.maximum(MAX_QUESTION_TIMEOUT_MS, { error: 'must be at most 30 days' })),
    ),
    retries: z.optional(count(0)),
    choices: z.optional(z.array(text()).check(z.minLength(1))),
    schema: z.optional(
      z.custom((s) => typeof (s as AnswerSchema<unknown>)?.['~standard']?.validate === 'function', {
        error: 'must be a Standard Schema (a zod 4 schema, for one)',
      }),
    ),
    reask: z.optional(text()),
    // A global or sticky regex keeps state between tests, so the same text would pass and then not.
    passThrough: z.optional(
      z.custom(
        (list) =>
          Array.isArray(list) &&
          list.every((p) =>
            p instanceof RegExp ? !p.global && !p.sticky : typeof p === 'string' && p.trim(),
          ),
        { error: 'must be an array of non-empty strings and regexes without the g or y flag' },
      ),
    ),
  });
}
let definitionChecks: ReturnType<typeof definitionSchema> | undefined;

/** The questions of one bot: declared, asked, answered, timed out. @internal */
export function createQuestions(bot: BotRuntime) {
  const { store } = bot;
  const definitions = new Map<string, QuestionDefinition<unknown>>();
  // The question a message's run ended (answered, gave up, cancelled): its replies say so.
  const ended = new WeakMap<MessageContext, QuestionEnd>();

  // The store steps.

  /** The conversation's record: its current question, and how its recent questions ended. */
  const load = async (conversationId: string): Promise<{ raw: string | undefined; stored: Stored }> => {
    const raw = await store.get(recordKey(conversationId));
    return { raw, stored: raw === undefined ? { ends: {} } : (JSON.parse(raw) as Stored) };
  };
  /**
   * Writes what `change` makes of the conversation's record, with compare-and-set: read again and
   * changed again when another write came first. `change` answers undefined to write nothing.
   */
  const update = async (conversationId: string, change: (stored: Stored) => Stored | undefined) => {
    for (;;) {
      const { raw, stored } = await load(conversationId);
      const next = change(stored);
      if (next === undefined) return;
      const now = bot.nowMs();
      const { asked } = next;
      // An end is kept a day (the current question's as long as the question); the record as long as
      // its question may still be answered or fired.
      const ends = Object.fromEntries(
        Object.entries(next.ends).filter(
          ([id, end]) => id === asked?.id || end.at + ENDED_RETENTION_MS > now,
        ),
      );
      const value = JSON.stringify({ ...next, ends });
      const ttl = asked && !ends[asked.id] ? PENDING_TTL_MS : ENDED_RETENTION_MS;
      if (await store.compareAndSet(recordKey(conversationId), raw, value, ttl)) return;
    }
  };
  /**
   * Sets question `id`'s end to `next` when it is still `expected`: with none expected, the
   * exactly-once claim that decides how the question ends; else a timeout's lease renewed, retaken or
   * done, or an answer done. Answers the end that stands after: `next` itself when it was written.
   */
  const swapEnd = async (
    conversationId: string,
    id: string,
    expected: Ending | undefined,
    next: Ending,
  ): Promise<Ending | undefined> => {
    let standing: Ending | undefined = next;
    await update(conversationId, (stored) => {
      standing = stored.ends[id];
      if (JSON.stringify(standing) !== JSON.stringify(expected)) return undefined;
      standing = next;
      return { ...stored, ends: { ...stored.ends, [id]: next } };
    });
    return standing;
  };
  /** The end of question `asked` by `by`, with what else that ending holds. */
  const endingOf = (asked: Asked, by: string, more: Partial<Ending> = {}): Ending => ({
    by,
    name: asked.name,
    state: asked.state,
    at: bot.nowMs(),
    ...more,
  });

  /** Adds a question with a deadline to the due index (again, on a retry of its ask: the same member). */
  const index = async (conversationId: string, asked: Asked): Promise<void> => {
    if (asked.deadline === undefined) return;
    const minute = minuteOf(asked.deadline);
    const member: DueMember = [asked.deadline, conversationId, asked.id];
    await store.enqueue(dueKey(minute), JSON.stringify(member), asked.deadline, PENDING_TTL_MS);
    // Moves the cursor back to this minute when it is later (or absent), so the timer reads it.
    for (let attempt = 0; attempt < 5; attempt++) {
      const raw = await store.get(CURSOR_KEY);
      if (raw !== undefined && Number(raw) <= minute) return;
      if (await store.compareAndSet(CURSOR_KEY, raw, String(minute), PENDING_TTL_MS)) return;
    }
  };

  /**
   * Walks the due index up to now: fires every member whose deadline passed, removes those that need
   * nothing more, and moves the cursor past minutes that ended long enough ago and are empty. Answers
   * how many fired.
   */
  const walkDue = async (): Promise<number> => {
    const nowMs = bot.nowMs();
    let fired = 0;
    const raw = await store.get(CURSOR_KEY);
    if (raw === undefined) return fired; // nothing was ever asked with a timeout (or all of it is long gone)
    // The cursor's minute, as it is written (String of a number).
    let from = Number(raw);
    const start = from;
    const last = minuteOf(nowMs);
    for (let minute = start; minute <= last && minute < start + MINUTES_PER_TICK; minute++) {
      const members = await store.readQueued(dueKey(minute));
      const finished: string[] = [];
      for (const member of members) {
        const [deadline, conversationId, questionId] = JSON.parse(member) as DueMember;
        if (deadline > nowMs) break; // scored by deadline: the rest are later still
        const result = await fire(conversationId, questionId);
        if (result === 'fired') fired += 1;
        if (result !== 'pending') finished.push(member);
      }
      const left = finished.length > 0 ? await store.readQueued(dueKey(minute), finished) : members;
      // Only the cursor's own minute moves it, so every minute before the cursor is empty.
      if (minute === from && left.length === 0 && (minute + 1) * MINUTE_MS + CURSOR_GRACE_MS <= nowMs) {
        if (!(await store.compareAndSet(CURSOR_KEY, String(from), String(from + 1), PENDING_TTL_MS)))
          return fired;
        from += 1;
      }
    }
    return fired;
  };

  // Asking.

  /**
   * Asks question `name` in the run of `from`, whose webhook id (or `timeout:{id}`) is `askedBy`.
   */
  const ask = async (
    from: Pick<MessageContext, 'conversationId' | 'reply'>,
    askedBy: string,
    name: unknown,
    text: unknown,
    options: AskOptions = {},
  ) => {
    const issues: FieldIssue[] = [];
    const definition = typeof name === 'string' ? definitions.get(name) : undefined;
    if (!definition)
      issues.push({
        field: 'name',
        message: `no question named '${String(name)}': declare it with bot.question`,
      });
    if (typeof text !== 'string' || text.trim() === '')
      issues.push({ field: 'text', message: 'must be a non-empty string' });
    const state = options.state ?? {};
    if (typeof state !== 'object' || state === null || Array.isArray(state))
      issues.push({ field: 'state', message: 'must be a JSON object' });
    if (issues.length > 0) throw new ValidationError(issues, 'ctx.ask');
    const quickReplies = options.quickReplies ? [...options.quickReplies] : undefined;
    const timeoutMs = definition?.timeoutMs;
    // The message says it asks a question, so whoever reads the conversation (the emulator) sees it
    // pending; its deadline is `timeout_ms` after the message, relative so that a retry of this run
    // sends the same body under the same Idempotency-Key. A re-ask names the question by `id`.
    const question = { name, ...(timeoutMs === undefined ? {} : { timeout_ms: timeoutMs }) };
    const sent = await from.reply(text as string, {
      ...(quickReplies ? { quickReplies } : {}),
      metadata: { question },
    });
    const nowMs = bot.nowMs();
    const fresh: Asked = {
      id: sent.message_id,
      name: name as string,
      state: JSON.parse(JSON.stringify(state)) as QuestionState,
      text: text as string,
      quickReplies,
      deadline: timeoutMs === undefined ? undefined : nowMs + timeoutMs,
      messageIds: [sent.message_id],
      tries: 0,
      askedBy,
    };
    // The question this one replaces ends in the same write. A retry of this run replays the
    // question's message, so it finds the question asked already (and indexes it again, in case the
    // run stopped between the two writes); once it ended (answered, timed out, replaced by a newer
    // question), a late retry does not bring it back over the conversation's current question.
    let pending: Asked | undefined = fresh;
    await update(from.conversationId, ({ asked, ends }) => {
      if (asked?.id === fresh.id || ends[fresh.id]) {
        pending = ends[fresh.id] ? undefined : asked;
        return undefined;
      }
      const replaced =
        asked && !ends[asked.id] ? { [asked.id]: endingOf(asked, REPLACED, { done: true }) } : {};
      return { asked: fresh, ends: { ...ends, ...replaced } };
    });
    if (pending) await index(from.conversationId, pending);
    return sent;
  };

  // The timeouts: fire one question, walk the due index, the timer.

  /** Runs the claimed timeout of question `questionId` under its lease; answers whether it finished. */
  const run = async (conversationId: string, questionId: string, claimed: Ending): Promise<FireResult> => {
    const controller = new AbortController();
    let current = claimed;
    // Renewals are chained, so the last one has settled before the end is written over `current`.
    let renewing: Promise<void> = Promise.resolve();
    const renew = () => {
      renewing = renewing.then(async () => {
        const next = { ...current, leaseUntil: bot.nowMs() + bot.lockTtlMs };
        if ((await swapEnd(conversationId, questionId, current, next)) === next) current = next;
        else controller.abort(new Error('The question timeout was taken over by another instance.'));
      });
    };
    const renewals = setInterval(renew, renewalEveryMs(bot.lockTtlMs));
    (renewals as { unref?: () => void }).unref?.();
    let failed = false;
    try {
      const definition = definitions.get(claimed.name);
      if (!definition) {
        bot.warn('a question timed out that this bot does not declare', { name: claimed.name });
      } else if (definition.onTimeout) {
        // Replies keyed on the question, replying to it, each saying the question timed out.
        const timedOut: QuestionEnd = { id: questionId, outcome: 'timed_out' };
        const replies = createReplies(bot, {
          conversationId,
          messageId: questionId,
          keyBase: questionId,
          keyName: 'timeout',
          signal: controller.signal,
          log: { questionId },
          ended: () => timedOut,
        });
        const ctx: QuestionTimeoutContext = {
          conversationId,
          question: { id: questionId, name: claimed.name },
          client: bot.client,
          signal: controller.signal,
          reply: replies.reply,
          ask: (name, text, options) => ask(ctx, `timeout:${questionId}`, name, text, options),
        };
        try {
          await definition.onTimeout(ctx, claimed.state);
        } finally {
          await replies.finish();
        }
      }
    } catch (error) {
      failed = true;
      bot.report(error);
    } finally {
      clearInterval(renewals);
      await renewing;
    }
    if (controller.signal.aborted) return 'pending'; // another instance owns it now
    // A failure is tried again once this shorter lease lapsed, by whichever instance walks the index first.
    const patch = failed ? { leaseUntil: bot.nowMs() + RETRY_AFTER_MS } : { done: true };
    await swapEnd(conversationId, questionId, current, { ...current, ...patch });
    return failed ? 'pending' : 'fired';
  };

  /**
   * Fires question `questionId` of the conversation if it is due and nothing else ended it: claims
   * its end (or retakes a timeout whose instance's lease lapsed), then runs its handler.
   */
  const fire = async (conversationId: string, questionId: string): Promise<FireResult> => {
    const now = bot.nowMs();
    const { asked, ends } = (await load(conversationId)).stored;
    const end = ends[questionId];
    if (end === undefined) {
      // Replaced by a newer question (and its end gone), or gone: nothing to fire.
      if (asked?.id !== questionId) return 'finished';
      if (asked.deadline === undefined || asked.deadline > now) return 'pending';
      const mine = endingOf(asked, BY_TIMEOUT, { leaseUntil: now + bot.lockTtlMs, attempts: 1 });
      // Someone else decided it just now: the next walk sees how.
      return (await swapEnd(conversationId, questionId, undefined, mine)) === mine
        ? run(conversationId, questionId, mine)
        : 'pending';
    }
    if (end.by !== BY_TIMEOUT || end.done) return 'finished';
    if ((end.leaseUntil ?? 0) > now) return 'pending'; // another instance is running it
    const attempts = (end.attempts ?? 1) + 1;
    if (attempts > MAX_TIMEOUT_ATTEMPTS) {
      const done = { ...end, done: true };
      if ((await swapEnd(conversationId, questionId, end, done)) === done)
        bot.report(new Error(`The timeout of question ${end.name} failed ${attempts - 1} times; given up.`));
      return 'finished';
    }
    const retaken = { ...end, leaseUntil: now + bot.lockTtlMs, attempts };
    return (await swapEnd(conversationId, questionId, end, retaken)) === retaken
      ? run(conversationId, questionId, retaken)
      : 'pending';
  };

  // One walk at a time in this process; a call made during one walks again after it, at its own time.
  let chain: Promise<unknown> = Promise.resolve();
  const fireDue = (): Promise<number> => {
    const next = chain.then(walkDue, walkDue);
    chain = next.catch(() => undefined);
    return bot.track(next);
  };

  let timer: ReturnType<typeof setInterval> | undefined;
  let ticking = false;
  let stopped = false;
  // A store that is down fails every tick: its first failure is reported, then none until a walk works.
  let failing = false;
  const tick = async () => {
    if (ticking) return;
    ticking = true;
    try {
      await fireDue();
      failing = false;
    } catch (error) {
      if (!failing) bot.report(error);
      failing = true;
    } finally {
      ticking = false;
    }
  };

  // Answers.

  /** Whether a typed answer is good: the schema's output, or any text without a schema. */
  const check = async (definition: QuestionDefinition<unknown>, input: string): Promise<Verdict> => {
    if (!definition.schema) return { ok: true, input, answer: input };
    const checked = await definition.schema['~standard'].validate(input);
    return checked.issues
      ? { ok: false, issue: checked.issues[0]?.message }
      : { ok: true, input, answer: checked.value };
  };

  /** Whether an answer is good: a choice (by value, action id, label or text), a schema's output, any text. */
  const judge = async (
    definition: QuestionDefinition<unknown>,
    asked: Asked,
    ctx: MessageContext,
  ): Promise<Verdict> => {
    const typed = ctx.text;
    const candidates = ctx.action
      ? [ctx.action.value, ctx.action.actionId]
      : [
          typed,
          ...(asked.quickReplies ?? []).filter((q) => same(q.label, typed)).map((q) => q.value ?? q.actionId),
        ];
    if (definition.choices) {
      for (const candidate of candidates) {
        const choice = definition.choices.find((c) => same(c, candidate));
        if (choice !== undefined) return { ok: true, input: choice, answer: choice };
      }
      return { ok: false };
    }
    return check(definition, candidates[0] ?? '');
  };

  /** Runs `onAnswer` for question `id`'s end this message holds, then marks it done. */
  const runAnswer = async (ctx: MessageContext, id: string, end: Ending) => {
    const definition = definitions.get(end.name);
    if (!definition) {
      bot.warn('an answered question has no declaration in this bot', { name: end.name });
      return;
    }
    // What the end kept is checked again: a retry decodes the same answer.
    const verdict = await check(definition, end.input ?? '');
    if (!verdict.ok)
      throw new ValidationError([{ field: 'answer', message: verdict.issue ?? 'refused' }], 'onAnswer');
    ended.set(ctx, { id, outcome: 'answered' });
    await definition.onAnswer(ctx, verdict.answer, end.state);
    await swapEnd(ctx.conversationId, id, end, { ...end, done: true });
  };

  /**
   * Ends a question with no answer (given up, cancelled): its end written like an answer's, so neither
   * an answer nor its timeout runs after it. True when this call (or an earlier run of `by`) ended it.
   */
  const endUnanswered = async (conversationId: string, asked: Asked, by: string): Promise<boolean> =>
    (await swapEnd(conversationId, asked.id, undefined, endingOf(asked, by, { done: true })))?.by === by;

  /** A bad answer: asked again with its quick replies, or, past `retries`, the question given up. */
  const reask = async (
    ctx: MessageContext,
    definition: QuestionDefinition<unknown>,
    asked: Asked,
    issue: string | undefined,
  ): Promise<boolean> => {
    if (asked.tries >= (definition.retries ?? 2)) {
      // Ended unanswered; the message goes on to the routes, whose replies say so.
      if (await endUnanswered(ctx.conversationId, asked, GAVE_UP))
        ended.set(ctx, { id: asked.id, outcome: 'gave_up' });
      return false;
    }
    const choices = definition.choices;
    const why =
      definition.reask ??
      issue ??
      (choices
        ? `Please answer ${choices.length === 2 ? choices.join(' or ') : `one of: ${choices.join(', ')}`}.`
        : 'Please answer again.');
    const sent = await ctx.reply(`${why}\n${asked.text}`, {
      ...(asked.quickReplies ? { quickReplies: asked.quickReplies } : {}),
      metadata: { question: { id: asked.id, name: asked.name } },
    });
    // Counted once, while the question still waits (a retry of this run replays the same re-ask).
    await update(ctx.conversationId, (stored) => {
      const now = stored.asked;
      if (now?.id !== asked.id || stored.ends[asked.id] || now.messageIds.includes(sent.message_id))
        return undefined;
      return {
        ...stored,
        asked: { ...now, tries: now.tries + 1, messageIds: [...now.messageIds, sent.message_id] },
      };
    });
    return true;
  };

  /**
   * The answer step, before the routes (once a question is declared): true when the message was the
   * current question's answer (or a stale click on it).
   */
  const take = async (ctx: MessageContext, isCommand: boolean): Promise<boolean> => {
    const { asked, ends } = (await load(ctx.conversationId)).stored;
    const { webhookId } = ctx;
    // A retry of a run that answered a question answers it again, unless its onAnswer finished: the
    // question may be replaced since by one that onAnswer asked.
    const answered = Object.entries(ends).find(([, end]) => end.by === webhookId);
    if (answered) {
      const [id, end] = answered;
      if (!end.done) await runAnswer(ctx, id, end);
      return true;
    }
    // No question waits, or this is a retry of the run that asked it: the routes take the message.
    if (!asked || asked.askedBy === webhookId) return false;
    const clicked = ctx.action !== undefined && asked.messageIds.includes(ctx.action.messageId);
    // An ended question takes no answer; a click on its buttons is dropped.
    if (ends[asked.id]) return clicked;
    const definition = definitions.get(asked.name);
    if (!definition) {
      bot.warn('a pending question has no declaration in this bot', { name: asked.name });
      return false;
    }
    const passes = (definition.passThrough ?? []).some((p) =>
      typeof p === 'string' ? same(p, ctx.text) : p.test(ctx.text),
    );
    if (ctx.action ? !clicked : isCommand || passes) return false;
    if (asked.deadline !== undefined && asked.deadline <= bot.nowMs()) {
      // Past its deadline: the timeout wins.
      await fire(ctx.conversationId, asked.id);
      return clicked;
    }
    const verdict = await judge(definition, asked, ctx);
    if (!verdict.ok) return reask(ctx, definition, asked, verdict.issue);
    // Decided already (by another answer, the timeout, a cancel): a click on it is dropped.
    const won = await swapEnd(
      ctx.conversationId,
      asked.id,
      undefined,
      endingOf(asked, webhookId, { input: verdict.input }),
    );
    if (won?.by !== webhookId) return clicked;
    await runAnswer(ctx, asked.id, won);
    return true;
  };

  return {
    /** `bot.question`: declares a question by name; a bad definition is refused at once. */
    declare(name: unknown, definition: unknown) {
      definitionChecks ??= definitionSchema();
      const checked = safeParse(definitionChecks, definition);
      const issues = checked.success ? [] : fieldIssues(checked.error);
      for (const issue of issues) issue.field ||= 'definition';
      const { choices, schema } = (definition ?? {}) as Partial<QuestionDefinition<unknown>>;
      if (choices !== undefined && schema !== undefined)
        issues.push({ field: 'schema', message: 'give choices or a schema, not both' });
      if (typeof name !== 'string' || !name.trim())
        issues.unshift({ field: 'name', message: 'must be a non-empty string' });
      else if (definitions.has(name))
        issues.unshift({ field: 'name', message: `a question named '${name}' is already declared` });
      if (issues.length > 0) throw new ValidationError(issues, 'bot.question');
      const declared = definition as QuestionDefinition<unknown>;
      definitions.set(name as string, declared);
      // The timer starts with the first timeout; where timers cannot be set outside a request
      // (Workers refuse them in the global scope), the author calls bot.fireDueQuestions() from a cron.
      if (declared.timeoutMs === undefined || timer !== undefined || stopped) return;
      try {
        timer = setInterval(tick, QUESTION_TICK_MS);
        (timer as { unref?: () => void }).unref?.();
      } catch {
        // No timer here: fireDueQuestions is the way.
      }
    },
    /** `ctx.ask`. */
    ask: (ctx: MessageContext, name: unknown, text: unknown, options?: AskOptions) =>
      ask(ctx, ctx.webhookId, name, text, options),
    /** `ctx.cancelQuestion`: ends the conversation's pending question without an answer. */
    async cancel(ctx: MessageContext) {
      const { asked } = (await load(ctx.conversationId)).stored;
      const done =
        asked !== undefined && (await endUnanswered(ctx.conversationId, asked, `cancelled:${ctx.webhookId}`));
      if (done) ended.set(ctx, { id: asked.id, outcome: 'cancelled' });
      return done;
    },
    /** The question a message's run ended, and how. */
    endOf: (ctx: MessageContext) => ended.get(ctx),
    take,
    /** `bot.fireDueQuestions`: fires every question past its deadline; answers how many fired. */
    fireDue,
    /** Stops the timer for good (the bot is closing). */
    stop() {
      stopped = true;
      clearInterval(timer);
      timer = undefined;
    },
  };
}

/** The questions of one bot. @internal */
export type Questions = ReturnType<typeof createQuestions>;
