// Questions to the user whose answer reaches the bot, whichever instance gets it and however long
// after: declared by name on the bot (`bot.question`), asked from a handler (`ctx.ask`), kept in the
// bot store (question-store.ts), timed out by every instance's timer.
//
// The answer step runs before the routes for every user message of a bot that declared a question.
// It reads the conversation's current question (one store read) and takes the message as its answer
// when it is a click on that question's quick replies, or any other message but a registered command
// or a text the question lets through (`passThrough`). An answer is validated (a choice, a schema);
// a bad one is re-asked, at most `retries` times, after which the question ends unanswered and the
// message goes on to the routes. A good one claims the question's end (question-store.ts), and the
// claim's winner runs `onAnswer`: two clicks, a click racing the timeout, two instances, one run.
//
// Question timeouts fire with no message: a timer every second (unref'd, so it never keeps a
// process alive) walks the due index in the bot store (question-store.ts) and fires each question
// whose deadline passed. Every instance walks it; the end claim (setIfAbsent) makes one of them, and
// only one, run the timeout, and never once an answer took the question. The instance that won holds
// a lease on it, renewed while `onTimeout` runs: if it dies, another retakes the timeout once the
// lease lapsed and runs it again; its replies carry keys derived from the question, so the retry
// replays what the first run posted instead of posting twice. A failed `onTimeout` is retried the
// same way, at most MAX_TIMEOUT_ATTEMPTS times. Runtimes without timers between requests call
// `bot.fireDueQuestions()` themselves (a Workers cron trigger).

import * as z from 'zod/mini';
import type { AgentClient } from '../client/agent-client.js';
import { ValidationError } from '../core/errors.js';
import { idempotencyKeyFor } from '../core/idempotency.js';
import { count, fn, text } from '../core/validate.js';
import { type FieldIssue, fieldIssues, safeParse } from '../schemas/issues.js';
import { type BotStore, renewalEveryMs } from '../store/bot-store.js';
import type { ReplySource } from '../streaming/pipe-reply.js';
import type { BotReplyOptions, BotReplyResult, MessageContext } from './bot-types.js';
import { createContextReply } from './context-reply.js';
import {
  type Asked,
  BY_TIMEOUT,
  type Ending,
  endingOf,
  endMarked,
  MAX_QUESTION_TIMEOUT_MS,
  type QuestionOutcome,
  type QuestionState,
  questionStore,
} from './question-store.js';
import type { QuickReply } from './rich-replies.js';

export type { QuestionState } from './question-store.js';

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

/** Who asks: the conversation, the run (a webhook id, or a timeout), and how it replies. */
interface Asker {
  conversationId: string;
  askedBy: string;
  parent?: string | undefined;
  reply(text: string, options?: BotReplyOptions): Promise<BotReplyResult>;
}

/** A verdict on an answer: what `onAnswer` gets, or why it was refused. */
type Verdict = { ok: true; input: string; answer: unknown } | { ok: false; issue?: string | undefined };

/** What the questions need from the bot. @internal */
export interface QuestionDeps {
  store: BotStore;
  client: AgentClient;
  nowMs: () => number;
  /** How long a timeout run's claim lives without a renewal (the bot's `lockTtlMs`). */
  leaseMs: number;
  typingRenewMs: number | undefined;
  report(error: unknown): void;
  warn(message: string, fields: Record<string, unknown>): void;
  /** Counts the work for `bot.idle()`. */
  track<T>(work: Promise<T>): Promise<T>;
}

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

/** The issue of `ctx.ask` with a name no `bot.question` declared. */
const unknownName = (name: unknown): FieldIssue => ({
  field: 'name',
  message: `no question named '${String(name)}': declare it with bot.question`,
});

/** `ctx.ask` of a bot that declared no question: every name is unknown. @internal */
export const refuseAsk = async (name: string): Promise<never> => {
  throw new ValidationError([unknownName(name)], 'ctx.ask');
};
/** `ctx.cancelQuestion` of a bot that declared no question: nothing to cancel. @internal */
export const nothingToCancel = async () => false;

/** The questions of one bot: declared, asked, answered, timed out. @internal */
export function createQuestions(deps: QuestionDeps) {
  const model = questionStore(deps.store);
  const definitions = new Map<string, QuestionDefinition<unknown>>();
  // The question a run ended (answered, gave up, cancelled): its replies say so, and a question it
  // asks in onAnswer knows its parent.
  const ended = new WeakMap<MessageContext, { id: string; outcome: QuestionOutcome }>();

  const ask = async (from: Asker, name: unknown, text: unknown, options: AskOptions = {}) => {
    const issues: FieldIssue[] = [];
    const definition = typeof name === 'string' ? definitions.get(name) : undefined;
    if (!definition) issues.push(unknownName(name));
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
    // A retry of this run replays the question's message, so it finds the question asked already;
    // its due-index entry is written again, in case the run stopped between the two writes.
    const found = await model.current(from.conversationId);
    const nowMs = deps.nowMs();
    if (found?.asked.id === sent.message_id) {
      if (found.asked.ended === undefined) await model.index(found.asked, nowMs);
      return sent;
    }
    // Ended already (answered, timed out, replaced by a newer question): a late retry of the run
    // that asked it does not bring it back over the conversation's current question.
    if (await model.ending(sent.message_id)) return sent;
    // The question this one replaces ends, so a retry of the run that asked it cannot bring it back.
    if (found && found.asked.ended === undefined) await endUnanswered(found.raw, found.asked, REPLACED);
    const asked: Asked = {
      id: sent.message_id,
      name: name as string,
      state: JSON.parse(JSON.stringify(state)) as QuestionState,
      conversationId: from.conversationId,
      text: text as string,
      ...(quickReplies ? { quickReplies } : {}),
      ...(timeoutMs === undefined ? {} : { deadline: nowMs + timeoutMs }),
      messageIds: [sent.message_id],
      tries: 0,
      askedBy: from.askedBy,
      ...(from.parent === undefined ? {} : { parent: from.parent }),
    };
    await model.put(asked, nowMs);
    return sent;
  };

  // The timeouts: fire one question, walk the due index, the timer.

  /** The timeout handler's context: replies keyed on the question, replying to it. */
  const timeoutContext = (ending: Ending, signal: AbortSignal) => {
    let replies = 0;
    const replier = createContextReply({
      client: deps.client,
      conversationId: ending.conversationId,
      messageId: ending.questionId,
      nextReplyKey: () => {
        replies += 1;
        return idempotencyKeyFor(ending.questionId, replies === 1 ? 'timeout' : `timeout-${replies}`);
      },
      signal,
      store: deps.store,
      writerLeaseMs: deps.leaseMs,
      typingRenewMs: deps.typingRenewMs,
      warn: (error) => deps.warn('a typing call failed', { questionId: ending.questionId, error }),
    });
    // Each of its messages says the question timed out (metadata.question_end).
    const reply = (text: Parameters<QuestionTimeoutContext['reply']>[0], options?: BotReplyOptions) =>
      replier.reply(text, endMarked(options, ending.questionId, 'timed_out'));
    const ctx: QuestionTimeoutContext = {
      conversationId: ending.conversationId,
      question: { id: ending.questionId, name: ending.name },
      client: deps.client,
      signal,
      reply,
      ask: (name, text, options) =>
        ask(
          { conversationId: ending.conversationId, askedBy: `timeout:${ending.questionId}`, reply },
          name,
          text,
          options,
        ),
    };
    return { ctx, finish: replier.finish };
  };

  /** Runs the claimed timeout under its lease; answers whether it finished. */
  const run = async (claimed: string, ending: Ending): Promise<FireResult> => {
    const controller = new AbortController();
    let current = claimed;
    // Renewals are chained, so the last one has settled before the end is written over `current`.
    let renewing: Promise<void> = Promise.resolve();
    const renew = () => {
      renewing = renewing.then(async () => {
        const next = await model.swapEnding(current, { ...ending, leaseUntil: deps.nowMs() + deps.leaseMs });
        if (next) current = next;
        else controller.abort(new Error('The question timeout was taken over by another instance.'));
      });
    };
    const renewals = setInterval(renew, renewalEveryMs(deps.leaseMs));
    (renewals as { unref?: () => void }).unref?.();
    let failed = false;
    try {
      const definition = definitions.get(ending.name);
      if (!definition) {
        deps.warn('a question timed out that this bot does not declare', { name: ending.name });
      } else if (definition.onTimeout) {
        const made = timeoutContext(ending, controller.signal);
        try {
          await definition.onTimeout(made.ctx, ending.state);
        } finally {
          await made.finish();
        }
      }
    } catch (error) {
      failed = true;
      deps.report(error);
    } finally {
      clearInterval(renewals);
      await renewing;
    }
    if (controller.signal.aborted) return 'pending'; // another instance owns it now
    if (failed) {
      // Tried again once this shorter lease lapsed, by whichever instance walks the index first.
      await model.swapEnding(current, { ...ending, leaseUntil: deps.nowMs() + RETRY_AFTER_MS });
      return 'pending';
    }
    const { leaseUntil: _lease, ...rest } = ending;
    await model.swapEnding(current, { ...rest, done: true });
    await model.markEnded(ending.conversationId, ending.questionId, BY_TIMEOUT);
    return 'fired';
  };

  /**
   * Fires question `questionId` of the conversation if it is due and nothing else ended it: claims
   * its end (or retakes a timeout whose instance's lease lapsed), then runs its handler.
   */
  const fire = async (conversationId: string, questionId: string): Promise<FireResult> => {
    const now = deps.nowMs();
    const ended = await model.ending(questionId);
    if (ended === undefined) {
      const found = await model.current(conversationId);
      // Replaced by a newer question, or ended: nothing to fire.
      if (found?.asked.id !== questionId || found.asked.ended !== undefined) return 'finished';
      const { asked } = found;
      if (asked.deadline === undefined || asked.deadline > now) return 'pending';
      const ending = endingOf(asked, BY_TIMEOUT, { leaseUntil: now + deps.leaseMs, attempts: 1 });
      const claimed = await model.claim(ending);
      // Someone else decided it just now: the next walk sees how.
      return claimed ? run(claimed, ending) : 'pending';
    }
    const { raw, ending } = ended;
    if (ending.by !== BY_TIMEOUT || ending.done) return 'finished';
    if ((ending.leaseUntil ?? 0) > now) return 'pending'; // another instance is running it
    const attempts = (ending.attempts ?? 1) + 1;
    if (attempts > MAX_TIMEOUT_ATTEMPTS) {
      const { leaseUntil: _lease, ...rest } = ending;
      if (await model.swapEnding(raw, { ...rest, done: true })) {
        deps.report(
          new Error(`The timeout of question ${ending.name} failed ${attempts - 1} times; given up.`),
        );
        await model.markEnded(conversationId, questionId, BY_TIMEOUT);
      }
      return 'finished';
    }
    const retaken = { ...ending, leaseUntil: now + deps.leaseMs, attempts };
    const claimed = await model.swapEnding(raw, retaken);
    return claimed ? run(claimed, retaken) : 'pending';
  };

  // One walk at a time in this process; a call made during one walks again after it, at its own time.
  let chain: Promise<unknown> = Promise.resolve();
  const walk = async () => {
    let fired = 0;
    await model.walkDue(deps.nowMs(), async (conversationId, questionId) => {
      const result = await fire(conversationId, questionId);
      if (result === 'fired') fired += 1;
      return result !== 'pending';
    });
    return fired;
  };
  const fireDue = (): Promise<number> => {
    const next = chain.then(walk, walk);
    chain = next.catch(() => undefined);
    return deps.track(next);
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
      if (!failing) deps.report(error);
      failing = true;
    } finally {
      ticking = false;
    }
  };

  /** Starts the timer (once); where timers cannot be set outside a request, fireDue is the way. */
  const start = () => {
    if (timer !== undefined || stopped) return;
    try {
      timer = setInterval(tick, QUESTION_TICK_MS);
      (timer as { unref?: () => void }).unref?.();
    } catch {
      // Workers refuse timers in the global scope: the author calls bot.fireDueQuestions() from a cron.
    }
  };
  /** Stops the timer for good. */
  const stop = () => {
    stopped = true;
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };

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

  /** The answer `onAnswer` gets from what the end claim kept: a retry decodes it again. */
  const decode = async (definition: QuestionDefinition<unknown>, input: string): Promise<unknown> => {
    const verdict = await check(definition, input);
    if (verdict.ok) return verdict.answer;
    throw new ValidationError([{ field: 'answer', message: verdict.issue ?? 'refused' }], 'onAnswer');
  };

  /** Runs `onAnswer` for the claim this message holds, then marks the question ended. */
  const runAnswer = async (ctx: MessageContext, ending: Ending) => {
    const definition = definitions.get(ending.name);
    if (!definition) {
      deps.warn('an answered question has no declaration in this bot', { name: ending.name });
      return;
    }
    const answer = await decode(definition, ending.input ?? '');
    ended.set(ctx, { id: ending.questionId, outcome: 'answered' });
    await definition.onAnswer(ctx, answer, ending.state);
    await model.markEnded(ending.conversationId, ending.questionId, ending.by);
  };

  /**
   * Ends a question with no answer (given up, cancelled): claimed like an answer, so neither an
   * answer nor its timeout runs after it. True when this call (or an earlier run of `by`) ended it.
   */
  const endUnanswered = async (raw: string, asked: Asked, by: string): Promise<boolean> => {
    if ((await model.claim(endingOf(asked, by, { done: true }))) === undefined)
      return (await model.ending(asked.id))?.ending.by === by;
    await model.replace(raw, { ...asked, ended: by });
    return true;
  };

  /** A bad answer: asked again with its quick replies, or, past `retries`, the question given up. */
  const reask = async (
    ctx: MessageContext,
    definition: QuestionDefinition<unknown>,
    raw: string,
    asked: Asked,
    issue: string | undefined,
  ): Promise<boolean> => {
    if (asked.tries >= (definition.retries ?? 2)) {
      // Ended unanswered; the message goes on to the routes, whose replies say so.
      if (await endUnanswered(raw, asked, GAVE_UP)) ended.set(ctx, { id: asked.id, outcome: 'gave_up' });
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
    await model.replace(raw, {
      ...asked,
      tries: asked.tries + 1,
      messageIds: [...asked.messageIds, sent.message_id],
    });
    return true;
  };

  const passes = (definition: QuestionDefinition<unknown>, text: string) =>
    (definition.passThrough ?? []).some((p) => (typeof p === 'string' ? same(p, text) : p.test(text)));

  /**
   * The answer step, before the routes (once a question is declared): true when the message was the
   * current question's answer (or a stale click on it).
   */
  const take = async (ctx: MessageContext, isCommand: boolean): Promise<boolean> => {
    const found = await model.current(ctx.conversationId);
    if (!found) return false;
    const { raw, asked } = found;
    const { webhookId } = ctx;
    if (asked.askedBy === webhookId) {
      // A retry of the run that asked it. When that run was answering the question before (and
      // asked this one from onAnswer), it answers that one again; otherwise it goes to the routes.
      if (asked.parent === undefined) return false;
      const earlier = await model.ending(asked.parent);
      if (earlier?.ending.by !== webhookId) return false;
      await runAnswer(ctx, earlier.ending);
      return true;
    }
    const clicked = ctx.action !== undefined && asked.messageIds.includes(ctx.action.messageId);
    // An ended question takes only its own answer again (a redelivery) and clicks on its buttons.
    if (asked.ended !== undefined) return asked.ended === webhookId || clicked;
    const definition = definitions.get(asked.name);
    if (!definition) {
      deps.warn('a pending question has no declaration in this bot', { name: asked.name });
      return false;
    }
    if (ctx.action ? !clicked : isCommand || passes(definition, ctx.text)) return false;
    let ours = false;
    if (asked.deadline !== undefined && asked.deadline <= deps.nowMs()) {
      // Past its deadline: the timeout wins, unless an answer (this message's, on a retry) did first.
      await fire(asked.conversationId, asked.id);
      const ended = await model.ending(asked.id);
      if (ended && ended.ending.by !== webhookId) return clicked;
      ours = ended !== undefined;
    }
    const verdict = await judge(definition, asked, ctx);
    if (!verdict.ok) return reask(ctx, definition, raw, asked, verdict.issue);
    const ending = endingOf(asked, webhookId, { input: verdict.input });
    if (!ours && (await model.claim(ending)) === undefined) {
      // Decided already: by this message's earlier run (a retry runs it again), or by another.
      const ended = await model.ending(asked.id);
      if (ended?.ending.by !== webhookId) return clicked;
    }
    await runAnswer(ctx, ending);
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
      if (declared.timeoutMs !== undefined) start();
    },
    /** Gives a message's context its `ask` and `cancelQuestion` (once a question is declared). */
    attach(ctx: MessageContext) {
      ctx.cancelQuestion = async () => {
        const by = `cancelled:${ctx.webhookId}`;
        const found = await model.current(ctx.conversationId);
        const done =
          found !== undefined &&
          (found.asked.ended === undefined
            ? await endUnanswered(found.raw, found.asked, by)
            : found.asked.ended === by);
        if (done) ended.set(ctx, { id: found.asked.id, outcome: 'cancelled' });
        return done;
      };
      // Every reply of a run that ended a question says so (metadata.question_end).
      const send = ctx.reply;
      ctx.reply = (input, options) => {
        const end = ended.get(ctx);
        return send(input, end ? endMarked(options, end.id, end.outcome) : options);
      };
      ctx.ask = (name, text, options) => {
        const end = ended.get(ctx);
        const parent = end?.outcome === 'answered' ? end.id : undefined;
        const from = { conversationId: ctx.conversationId, askedBy: ctx.webhookId, parent, reply: ctx.reply };
        return ask(from, name, text, options);
      };
    },
    take,
    /** `bot.fireDueQuestions`: fires every question past its deadline; answers how many fired. */
    fireDue,
    /** Stops the timer (the bot is closing). */
    stop,
  };
}

/** The questions of one bot. @internal */
export type Questions = ReturnType<typeof createQuestions>;
