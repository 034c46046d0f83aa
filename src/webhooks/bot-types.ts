// The public types of the bot: its options, the context each handler receives, and the bot itself.

import type { AgentClient } from '../client/agent-client.js';
import type { AgentClientOptions, Logger } from '../core/options.js';
import type { HistoryOptions } from '../llm/conversation-history.js';
import type { ModelMessageFormat, ModelMessageFormats } from '../llm/model-formats.js';
import type { UploadData } from '../resources/attachments.js';
import type { Receipt } from '../schemas/conversations.js';
import type { Message, ReactionResponse } from '../schemas/messages.js';
import type { MessageReceivedEvent, Postback, WebhookEvent, WebhookEventType } from '../schemas/webhooks.js';
import type { BotStore } from '../store/bot-store.js';
import type { ReplyResult } from '../streaming/options.js';
import type { PipeReplyOptions, ReplySource } from '../streaming/pipe-reply.js';
import type { FileReplyOptions, QuickReply, StopTyping } from './context-reply.js';
import type { DeliveryAnswer, DeliveryOptions, WaitUntil } from './delivery.js';
import type { AskOptions, QuestionDefinition, QuestionState } from './questions.js';
import type { Middleware } from './router.js';
import type { BotSession, SessionOptions } from './session.js';
import type { VerifyWebhookOptions, WebhookBody, WebhookHeaders } from './verify.js';

/**
 * Options of `createBot`: the client's options, the webhook secret, how deliveries are verified
 * (`toleranceSec` and the clock `now`, as verifyWebhook takes them) and how they are answered.
 */
export interface BotOptions extends AgentClientOptions, Pick<VerifyWebhookOptions, 'toleranceSec' | 'now'> {
  /** The agent's webhook secret (`whsec_...`), or several while rotating it. */
  webhookSecret: string | readonly string[];
  /**
   * When to answer a delivery. `'after-handler'` (default) waits for the handlers, at most `ackTimeoutMs`;
   * `'immediately'` answers 202 at once and lets them run on (serverless, with `waitUntil`): a run
   * that fails after that answer is not retried by the service.
   */
  ack?: 'after-handler' | 'immediately';
  /**
   * Longest wait for the handlers; 8000 ms, under the service's 10 s timeout. Past it the delivery is
   * answered 409 `delivery_in_progress` while the handlers run on, so the service retries it: the
   * retry waits up to as long again for the run, then answers 200 duplicate, or runs the message
   * again if the run failed.
   */
  ackTimeoutMs?: number;
  /**
   * Where the bot keeps its state: handled webhook ids, per-conversation locks and queues, sessions,
   * interruptions. `createMemoryStore()` by default (one process); a shared store such as
   * `createRedisStore()` from `agent-messaging/redis` for several instances.
   */
  store?: BotStore;
  /**
   * How the messages of one conversation are handled (user messages; other events run at once):
   * - `'queue'` (default): one handler at a time per conversation, in `sequence` order; each
   *   message gets its own run.
   * - `'interrupt'`: a newer message aborts the running handler (`ctx.signal` fires, its streaming
   *   reply ends marked interrupted), then the newer message is handled.
   * - `'debounce'`: messages arriving within `debounceMs` of the first one are handled once, together
   *   (`ctx.messages`); the window is fixed, not reset by each message.
   * - `'concurrent'`: every delivery runs at once, as it arrives.
   */
  concurrency?: 'queue' | 'interrupt' | 'debounce' | 'concurrent';
  /** How long the window of `'debounce'` gathers messages, in milliseconds; 1000 by default. */
  debounceMs?: number;
  /**
   * How long a conversation's lock, a delivery's in-flight claim and a streamed reply's writer lease
   * live without a renewal; renewed every second (every third of it when shorter) while held. 4500 by
   * default: a killed instance's are gone before the service's first retry, 5 s after the failed
   * delivery, so that retry runs the message. A stall longer than this loses the lock (docs/bot.md).
   */
  lockTtlMs?: number;
  /**
   * The longest one handler run may take, in milliseconds (10 minutes by default): past it
   * `ctx.signal` fires, its replies are refused, and the run counts as a failed attempt. Its
   * conversation's lock is kept one `lockTtlMs` more for the run to end; a run still going then is
   * given up at once (never run again) and the conversation moves on.
   */
  maxHandlerMs?: number;
  /**
   * How many failed runs of one message (a handler that threw, or ran past `maxHandlerMs`) are
   * tried before it is given up, counted in the bot store across instances; 3 by default. A message
   * given up is answered 2xx and marked handled, so the service stops retrying it, and `onError`
   * gets a `MessageGivenUpError` naming it, its attempts and the last failure as `cause`.
   */
  maxAttempts?: number;
  /**
   * Under `'queue'` and `'interrupt'`, how long a message waits for a user message before it in its
   * conversation that has not reached the bot (a delivery that failed and awaits the service's retry,
   * or a run that failed and awaits its own), in milliseconds; 15000 by default (the service's 10 s
   * delivery timeout plus its 5 s first retry). Past it the message runs and the missing one, if it
   * comes later, runs after it. 0 never waits. See docs/bot.md, "Order with gaps".
   */
  gapWaitMs?: number;
  /**
   * Turns on `ctx.session` (`{}` for the defaults): how long a conversation's state lives (`ttlMs`)
   * and what it starts as (`initial`). Without it no session is read or saved, and `ctx.session`
   * throws a ValidationError naming `session`.
   */
  session?: SessionOptions;
  /** Keeps the process alive for a handler that outlives its response, where no per-request ctx gives one. */
  waitUntil?: WaitUntil;
  /**
   * The clock of the bot's own deadlines (question timeouts); `new Date()` by default. A test gives
   * the mock's clock, so that `mock.clock.advance()` moves the deadlines with it (the service's
   * `webhook-timestamp` stays real time, checked by `now`).
   * @example clock: () => mock.clock.now()
   */
  clock?: () => Date;
  /** Receives the bot's own lines (refused deliveries, failures) as well as the client's debug lines. */
  logger?: Logger;
}

/** What the parts of one bot share: its client and store, its clock and lease, where failures go. @internal */
export interface BotRuntime {
  client: AgentClient;
  store: BotStore;
  /** The bot's `lockTtlMs`: a streamed reply's writer lease, a question timeout's lease. */
  lockTtlMs: number;
  /** The clock of the bot's own deadlines (question timeouts), in epoch milliseconds. */
  nowMs(): number;
  /** Logs a failure that must not fail what it happened in (a typing call). */
  warn(message: string, fields: Record<string, unknown>): void;
  /** Hands a failure to `onError` (or the log). */
  report(error: unknown, event?: WebhookEvent, webhookId?: string): void;
  /** Counts work for `bot.idle()`. */
  track<T>(work: Promise<T>): Promise<T>;
}

/** What every handler receives. */
export interface EventContext<E = WebhookEvent> {
  /** The verified event. */
  event: E;
  /** The `webhook-id` of the delivery: the same for every retry of it. */
  webhookId: string;
  /** A client authenticated as the agent. */
  client: AgentClient;
  /**
   * Fires when the handler should stop: a newer message interrupted it (`'interrupt'`), the
   * conversation's lock was lost, or it ran past `maxHandlerMs`. Pass it to model calls and
   * replies; `signal.reason` is an Error named `InterruptedError`, `LockLostError` or `TimeoutError`.
   */
  signal: AbortSignal;
}

/**
 * Options of {@link MessageContext.reply}. A streamed reply takes `messages.reply`'s `metadata`,
 * `onToolCall` (the typing indicator stays on while a tool call runs), `writerLeaseMs` (default: the
 * bot's `lockTtlMs`) and `writerWaitMs`.
 */
export interface BotReplyOptions
  extends Pick<PipeReplyOptions, 'metadata' | 'onToolCall' | 'writerLeaseMs' | 'writerWaitMs'> {
  /** The message replied to; the received message by default, `null` for none. */
  replyToMessageId?: string | null;
  /**
   * Buttons under the reply (an `actions` block, layout `quick_replies`); a click comes back as a
   * message with `ctx.action` (see `bot.action`). At most 10.
   * @example quickReplies: [{ actionId: 'yes', label: 'Yes', value: 'pick:yes' }]
   */
  quickReplies?: readonly QuickReply[];
  /**
   * When a streamed reply's quick replies appear: `'start'` (default) under the reply from its first
   * chunk; `'completion'` in a message of their own once the reply completed, so nothing is clickable
   * while it streams and a reply cut short offers none. A text reply is whole at once either way.
   * @example quickRepliesAt: 'completion'
   */
  quickRepliesAt?: 'start' | 'completion';
}

/** What `ctx.replyWithFile` produced: the reply message's id and status, and its attachment. */
export interface BotFileReplyResult extends Pick<ReplyResult, 'message_id' | 'status'> {
  /** The uploaded attachment (the same on a redelivery: it is not uploaded again). */
  attachment_id: string;
}

/** What a `message.received` handler receives. */
export interface MessageContext extends EventContext<MessageReceivedEvent> {
  /** The message the user sent (snake_case, as in history); the newest of `messages`. */
  message: Message;
  /**
   * Every message this run answers, oldest first: several under `'debounce'` (or `'interrupt'`
   * when more arrived while a handler was interrupted), else just `message`.
   */
  messages: readonly Message[];
  /**
   * This conversation's state, loaded from the bot store before the handlers and saved after them
   * when they succeeded (compare-and-set: a concurrent save makes this run fail with a
   * SessionConflictError, and the service's retry runs it on the newer state). Any JSON object.
   * Needs `createBot({ session: {} })` (or with options); without it, reading it throws.
   *
   * @example
   * ctx.session.count = Number(ctx.session.count ?? 0) + 1;
   */
  session: BotSession;
  /** True when the message names the agent (`invoked_agents`; always so in its own conversation). */
  mentioned: boolean;
  /** True in a group conversation. */
  isGroup: boolean;
  /** True in the agent's one-to-one conversation with the user. */
  isDirect: boolean;
  /** The quick reply clicked, when this message is a click (PROTOCOL.md section 14). */
  action?: BotAction;
  /** The command, when a `bot.command` route took the message: its name and the text after it. */
  command?: { name: string; args: string };
  /** The match of the `bot.hears` or `bot.action` regex that took the message. */
  match?: RegExpExecArray;
  /** Its text parts, joined with newlines as the service joins them for `fallback_text`. */
  text: string;
  /** The conversation it was sent in. */
  conversationId: string;
  /**
   * Replies in the conversation, to the received message. A string is sent at once; an async iterable
   * of text, or a model stream (OpenAI, AI SDK `streamText`, Anthropic: see toTextStream), is
   * streamed as it comes. A redelivered event never replies twice: each reply's
   * Idempotency-Key derives from the webhook id and the reply's position in the handler.
   */
  reply(text: string | ReplySource, options?: BotReplyOptions): Promise<BotReplyResult>;
  /**
   * Uploads a file and replies with it (an image block for an `image/*` type, else a file block),
   * with an optional caption. A redelivery neither uploads again nor posts twice.
   *
   * @example
   * await ctx.replyWithFile(pngBytes, { name: 'chart.png', mime_type: 'image/png', caption: 'Here' });
   */
  replyWithFile(data: UploadData, options: FileReplyOptions): Promise<BotFileReplyResult>;
  /**
   * Asks the question declared as `name` (`bot.question`): sends `text` (with its quick replies) and
   * keeps the question in the bot store, so the conversation's next answer reaches that question's
   * `onAnswer`, with `state`, on whichever instance gets it. One question per conversation: asking
   * again replaces the pending one. Resolves with the question's message once it is stored.
   *
   * @example
   * await ctx.ask('refund-confirm', 'Refund $42 to your card?', {
   *   state: { orderId: 'o_42' },
   *   quickReplies: [{ actionId: 'yes', label: 'Yes' }, { actionId: 'no', label: 'No' }],
   * });
   */
  ask(name: string, text: string, options?: AskOptions): Promise<BotReplyResult>;
  /**
   * Ends the conversation's pending question without an answer: neither its `onAnswer` nor its
   * `onTimeout` runs, and clicks on its buttons are dropped. True when there was one to end (also
   * on a redelivery of the run that ended it).
   *
   * @example
   * bot.command('/cancel', async (ctx) => ctx.reply((await ctx.cancelQuestion()) ? 'Cancelled.' : 'Nothing to cancel.'));
   */
  cancelQuestion(): Promise<boolean>;
  /** Shows the typing indicator until the handler ends or the returned function is called. */
  typing(): Promise<StopTyping>;
  /** Adds a reaction to the received message. */
  react(emoji: string): Promise<ReactionResponse>;
  /** Marks the received message read. */
  markRead(): Promise<Receipt>;
  /**
   * The model's input, oldest first, as model messages of `format` (`openai`, `ai-sdk` or
   * `anthropic`): the conversation before the first of `messages`, the bot's answers posted since
   * to other messages, then every message of `messages` (see docs/llm.md).
   * @example const history = await ctx.history({ limit: 20, format: 'openai' });
   */
  history<F extends ModelMessageFormat>(options: HistoryOptions<F>): Promise<ModelMessageFormats[F][]>;
}

/** A quick-reply click: the action's id and value, and the id of the message holding it. */
export type BotAction = Pick<Postback, 'actionId' | 'value' | 'messageId'>;

/**
 * What a reply produced: the fields of the reply writer's result that every reply has. Its `outcome`
 * is `complete`, `interrupted` (cut short, marked) or `replayed` (an earlier run's).
 */
export interface BotReplyResult extends Pick<ReplyResult, 'message_id' | 'status' | 'text' | 'outcome'> {}

/** The context of an event type: a MessageContext for `message.received`, else an EventContext. */
export type ContextFor<T extends string> = T extends 'message.received' | 'mention'
  ? MessageContext
  : EventContext<T extends WebhookEventType ? Extract<WebhookEvent, { type: T }> : WebhookEvent>;

/** A handler; it may return a promise, which the delivery waits for. */
export type Handler<C> = (ctx: C) => unknown;

/**
 * What an error handler learns about a failure: the event whose handling failed, when it got that
 * far, and the webhook id of its delivery.
 */
export interface BotErrorInfo extends Partial<Pick<EventContext, 'event' | 'webhookId'>> {}

/** Options of {@link Bot.close}. */
export interface BotCloseOptions {
  /** How long running handlers may go on, in milliseconds, before their signal fires; 25000 by default. */
  deadline?: number;
}

/** A bot: register handlers, then serve `bot.fetch`, `toNodeHandler(bot)` or `bot.handleDelivery`. */
export interface Bot {
  /**
   * Handles one event type; several handlers of a type run in registration order. `'mention'` takes
   * group messages that name the agent; `'message.received'` takes the messages no route took.
   */
  on<T extends WebhookEventType | 'mention' | (string & {})>(type: T, handler: Handler<ContextFor<T>>): Bot;
  /**
   * Adds a middleware around every event's handlers, in registration order.
   *
   * @example
   * bot.use(async (ctx, next) => { const t = Date.now(); await next(); console.log(Date.now() - t); });
   */
  use(middleware: Middleware): Bot;
  /**
   * Takes messages that start with the command (`'/help'`, `'/help args'`, `'/help@handle'`);
   * `ctx.command` holds its name and the text after it.
   *
   * @example
   * bot.command('/help', (ctx) => ctx.reply('Ask me anything.'));
   */
  command(name: string, handler: Handler<MessageContext>): Bot;
  /**
   * Takes messages whose text matches: a regex (not global or sticky; `ctx.match` holds the match),
   * or a string equal to the whole trimmed text.
   *
   * @example
   * bot.hears(/weather in (\w+)/i, (ctx) => ctx.reply(`Sunny in ${ctx.match?.[1]}`));
   */
  hears(pattern: RegExp | string, handler: Handler<MessageContext>): Bot;
  /**
   * Takes quick-reply clicks whose action id, or else value, equals the string or matches the regex;
   * `ctx.action` holds `{ actionId, value, messageId }`.
   *
   * @example
   * bot.action('yes', (ctx) => ctx.reply(`You chose ${ctx.action?.value}`));
   */
  action(pattern: RegExp | string, handler: Handler<MessageContext>): Bot;
  /** Handles every event, after its typed handlers; the place for event types this SDK does not know. */
  onAny(handler: Handler<EventContext>): Bot;
  /**
   * Declares a question that handlers ask with `ctx.ask(name, ...)`. Its answer (a click on its quick
   * replies, or the conversation's next text, checked against `choices` or `schema`) runs `onAnswer`
   * instead of the routes; registered commands still reach theirs. With `timeoutMs`, `onTimeout`
   * runs once when no answer came, with no message needed. Declare the same questions on every
   * instance: the pending question lives in the bot store, by name.
   *
   * @example
   * bot.question('refund-confirm', {
   *   choices: ['yes', 'no'],
   *   timeoutMs: 10 * 60_000,
   *   onAnswer: (ctx, answer, state) => ctx.reply(answer === 'yes' ? `Refunded ${state.orderId}` : 'Kept.'),
   *   onTimeout: (ctx) => ctx.reply('No answer, so nothing was refunded.'),
   * });
   */
  question<A = string, S extends QuestionState = QuestionState>(
    name: string,
    definition: QuestionDefinition<A, S>,
  ): Bot;
  /**
   * Fires every question past its deadline now, and answers how many fired. Each instance does this
   * every second by itself; call it where there are no timers between requests (a Workers cron
   * trigger, a scheduled function), or in a test after moving the clock.
   *
   * @example
   * export default { fetch: bot.fetch, scheduled: (_event, _env, ctx) => ctx.waitUntil(bot.fireDueQuestions()) };
   */
  fireDueQuestions(): Promise<number>;
  /** Receives a handler's error (the delivery is then answered 500 so the service retries). */
  onError(handler: (error: unknown, info: BotErrorInfo) => unknown): Bot;
  /**
   * The bot's one entry: answers one webhook delivery (a POST) from its raw body, exactly as it was
   * signed, and its headers. It verifies, deduplicates and runs the handlers; the answer is ready
   * for any HTTP server to write as it is. `bot.fetch` and `toNodeHandler` are built on it. Bound,
   * so it can be handed around.
   *
   * @example
   * // Any server that gives the raw body: hand it over with the headers, write back the answer.
   * const answer = await bot.handleDelivery(rawBody, req.headers);
   * res.writeHead(answer.status, answer.headers).end(answer.body);
   */
  handleDelivery: (
    body: WebhookBody,
    headers: WebhookHeaders,
    options?: DeliveryOptions,
  ) => Promise<DeliveryAnswer>;
  /**
   * The Web-standard adapter of {@link Bot.handleDelivery}: reads the Request's body (at most 1 MiB)
   * and answers a Response. Bound, so `export default { fetch: bot.fetch }` works;
   * `executionCtx.waitUntil` (Workers) keeps a handler alive after an early answer.
   */
  fetch: (request: Request, env?: unknown, executionCtx?: { waitUntil?: WaitUntil }) => Promise<Response>;
  /**
   * Resolves when every handler run the bot started has settled, including runs whose delivery was
   * answered early (202 with `ack: 'immediately'`, 409 past `ackTimeoutMs` running or waiting for its
   * conversation).
   *
   * @example
   * mock.postUserMessage(conversationId, { user_id, text: 'hi' });
   * await mock.idle();   // the delivery was answered
   * await bot.idle();    // and every handler it started has finished
   */
  idle(): Promise<void>;
  /**
   * Shuts the bot down gracefully, for a deploy or a SIGTERM. From now on every delivery is answered
   * 503 `shutting_down` (the service retries it, on another instance or on this one restarted); each
   * conversation this process holds is let go after the message it is running, with the rest of its
   * queue left, in order, for the next holder; deliveries waiting for their turn here are answered 503
   * and left queued. Handlers still running get until `deadline` (ms, 25000 by default, inside
   * Kubernetes' 30 s grace period); then their `ctx.signal` fires (`ShutdownError`), a streaming reply
   * ends marked ` … [interrupted]`, and their deliveries are answered 503 so the service's retry runs
   * them again. Resolves once every run ended (or 2 s after the deadline, for a handler that ignores
   * its signal); the question timer is stopped. Calling it again answers the same promise.
   *
   * @example
   * process.on('SIGTERM', async () => {
   *   server.close();                          // no new connections
   *   await bot.close({ deadline: 20_000 });   // finish what runs, hand the rest to the other instances
   *   process.exit(0);
   * });
   */
  close(options?: BotCloseOptions): Promise<void>;
  /** The client the handlers receive. */
  client: AgentClient;
}
