// Questions to the user whose answer reaches the bot, whichever instance gets it and however long
// after: declared by name on the bot (`bot.question`), asked from a handler (`ctx.ask`), kept in the
// bot store (question-store.ts), timed out by every instance's timer (question-timeouts.ts).
//
// The answer step runs before the routes for every user message of a bot that declared a question.
// It reads the conversation's current question (one store read) and takes the message as its answer
// when it is a click on that question's quick replies, or any other message but a registered command
// or a text the question lets through (`passThrough`). An answer is validated (a choice, a schema);
// a bad one is re-asked, at most `retries` times, after which the question ends unanswered and the
// message goes on to the routes. A good one claims the question's end (question-store.ts), and the
// claim's winner runs `onAnswer`: two clicks, a click racing the timeout, two instances, one run.

import * as z from 'zod/mini';
import type { AgentClient } from '../client/agent-client.js';
import { ValidationError } from '../core/errors.js';
import { count, fn, text } from '../core/validate.js';
import { type FieldIssue, fieldIssues, safeParse } from '../schemas/issues.js';
import type { BotStore } from '../store/bot-store.js';
import type { ReplySource } from '../streaming/pipe-reply.js';
import type { BotReplyOptions, BotReplyResult, MessageContext } from './bot-types.js';
import {
  type Asked,
  type Ending,
  endingOf,
  endMarked,
  MAX_QUESTION_TIMEOUT_MS,
  type QuestionOutcome,
  type QuestionState,
  questionStore,
} from './question-store.js';
import { createTimeouts } from './question-timeouts.js';
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

/** Who asks: the conversation, the run (a webhook id, or a timeout), and how it replies. @internal */
export interface Asker {
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

const same = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();
const GAVE_UP = 'gave-up';
const REPLACED = 'replaced';

/** What `bot.question` checks of a definition before it is declared, naming each bad field. */
const Definition = z.object({
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
        list.every((p) => (p instanceof RegExp ? !p.global && !p.sticky : typeof p === 'string' && p.trim())),
      { error: 'must be an array of non-empty strings and regexes without the g or y flag' },
    ),
  ),
});

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

  const timeouts = createTimeouts({ ...deps, model, definitions, ask });

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
      await timeouts.fire(asked.conversationId, asked.id);
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
      const checked = safeParse(Definition, definition);
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
      if (declared.timeoutMs !== undefined) timeouts.start();
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
    fireDue: timeouts.fireDue,
    /** Stops the timer (the bot is closing). */
    stop: timeouts.stop,
  };
}

/** The questions of one bot. @internal */
export type Questions = ReturnType<typeof createQuestions>;
