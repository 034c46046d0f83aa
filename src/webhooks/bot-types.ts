// The public types of the bot: its options, the context each handler receives, and the bot itself.

import type { AgentClient } from '../client/agent-client.js';
import type { AgentClientOptions, Logger } from '../core/options.js';
import type { Receipt } from '../schemas/conversations.js';
import type { Message, ReactionResponse } from '../schemas/messages.js';
import type { MessageReceivedEvent, WebhookEvent, WebhookEventType } from '../schemas/webhooks.js';
import type { DedupeStore } from './dedupe-store.js';
import type { WaitUntil } from './delivery.js';
import type { StopTyping } from './typing.js';

/** Options of `createBot`: the client's options, the webhook secret, and how deliveries are answered. */
export interface BotOptions extends AgentClientOptions {
  /** The agent's webhook secret (`whsec_...`), or several while rotating it. */
  webhookSecret: string | readonly string[];
  /**
   * When to answer a delivery. `'after-handler'` (default) waits for the handlers, at most `ackTimeoutMs`;
   * `'immediately'` answers 202 at once and lets them run on (serverless, with `waitUntil`).
   */
  ack?: 'after-handler' | 'immediately';
  /** Longest wait for the handlers before answering 202 anyway; 8000 ms, under the service's 10 s timeout. */
  ackTimeoutMs?: number;
  /** Where handled webhook ids are kept; a bounded in-memory store by default. */
  dedupe?: DedupeStore;
  /** How far `webhook-timestamp` may be from the clock, in seconds; 300 by default. */
  toleranceSec?: number;
  /** Keeps the process alive for a handler that outlives its response, where no per-request ctx gives one. */
  waitUntil?: WaitUntil;
  /** How often `typing()` renews the indicator, in milliseconds; 8000 by default. */
  typingRenewMs?: number;
  /** The clock used to check `webhook-timestamp`; `new Date()` by default. */
  now?: () => Date;
  /** Receives the bot's own lines (refused deliveries, failures) as well as the client's debug lines. */
  logger?: Logger;
}

/** What every handler receives. */
export interface EventContext<E = WebhookEvent> {
  /** The verified event. */
  event: E;
  /** The `webhook-id` of the delivery: the same for every retry of it. */
  webhookId: string;
  /** A client authenticated as the agent. */
  client: AgentClient;
}

/** Options of {@link MessageContext.reply}. */
export interface BotReplyOptions {
  /** The message replied to; the received message by default, `null` for none. */
  replyToMessageId?: string | null;
  /** Free-form metadata sent with the reply. */
  metadata?: Record<string, unknown>;
}

/** What a `message.received` handler receives. */
export interface MessageContext extends EventContext<MessageReceivedEvent> {
  /** The message the user sent (snake_case, as in history). */
  message: Message;
  /** Its text parts, joined with newlines as the service joins them for `fallback_text`. */
  text: string;
  /** The conversation it was sent in. */
  conversationId: string;
  /**
   * Replies in the conversation, to the received message. A string is sent at once; an async iterable
   * of text is streamed as it comes. A redelivered event never replies twice: each reply's
   * Idempotency-Key derives from the webhook id and the reply's position in the handler.
   */
  reply(
    text: string | AsyncIterable<string> | Iterable<string>,
    options?: BotReplyOptions,
  ): Promise<BotReplyResult>;
  /** Shows the typing indicator until the handler ends or the returned function is called. */
  typing(): Promise<StopTyping>;
  /** Adds a reaction to the received message. */
  react(emoji: string): Promise<ReactionResponse>;
  /** Marks the received message read. */
  markRead(): Promise<Receipt>;
}

/** What a reply produced (the fields of the reply writer's result that every reply has). */
export interface BotReplyResult {
  /** The id of the reply message. */
  message_id: string;
  /** `sent` once the reply is complete. */
  status: string;
  /** The text of the reply. */
  text: string;
}

/** The context of an event type: a MessageContext for `message.received`, else an EventContext. */
export type ContextFor<T extends string> = T extends 'message.received'
  ? MessageContext
  : EventContext<T extends WebhookEventType ? Extract<WebhookEvent, { type: T }> : WebhookEvent>;

/** A handler; it may return a promise, which the delivery waits for. */
export type Handler<C> = (ctx: C) => unknown;

/** What an error handler learns about a failure. */
export interface BotErrorInfo {
  /** The event whose handling failed, when it got that far. */
  event?: WebhookEvent;
  /** The webhook id of the delivery. */
  webhookId?: string;
}

/** A bot: register handlers, then serve `bot.fetch` (or `toNodeHandler(bot)`). */
export interface Bot {
  /** Handles one event type; several handlers of a type run in registration order. */
  on<T extends WebhookEventType | (string & {})>(type: T, handler: Handler<ContextFor<T>>): Bot;
  /** Handles every event, after its typed handlers; the place for event types this SDK does not know. */
  onAny(handler: Handler<EventContext>): Bot;
  /** Receives a handler's error (the delivery is then answered 500 so the service retries). */
  onError(handler: (error: unknown, info: BotErrorInfo) => unknown): Bot;
  /**
   * The Web-standard entry: answers one delivery. Bound, so `export default { fetch: bot.fetch }` works;
   * `executionCtx.waitUntil` (Workers) keeps a handler alive after an early answer.
   */
  fetch: (request: Request, env?: unknown, executionCtx?: { waitUntil?: WaitUntil }) => Promise<Response>;
  /** The client the handlers receive. */
  client: AgentClient;
}
