// The context a handler receives, and one run of the handlers over it. The context of a
// `message.received` handler holds the message and replies that a redelivery cannot double; whether
// it reached the bot in a group and names the bot comes from PROTOCOL.md section 14 (below). A run
// builds the context from its batch (the newest delivery is the event, all of them are
// `ctx.messages`), then dispatches to the router, then gives every run its cleanup (typing stopped).
//
// Whether a message is in a group: the webhook body has no conversation kind, but in an agent-kind
// conversation `invoked_agents` always holds the agent, so a message that does not invoke it is in a
// group. Only a message that does invoke it needs the kind, asked once per conversation and
// remembered (the agent's read shape of a conversation has a counterpart user in a one-to-one
// conversation, none in a group).

import type { AgentClient } from '../client/agent-client.js';
import { RequestAbortedError, ValidationError } from '../core/errors.js';
import { idempotencyKeyFor } from '../core/idempotency.js';
import { conversationHistory } from '../llm/conversation-history.js';
import type { Message } from '../schemas/messages.js';
import type { MessageReceivedEvent, WebhookEvent } from '../schemas/webhooks.js';
import type { BotStore } from '../store/bot-store.js';
import {
  annotate,
  bindSpan,
  childSpan,
  endSpan,
  inSpan,
  metric,
  recoveriesOf,
  type Traced,
} from '../telemetry.js';
import type { EventContext, MessageContext } from './bot-types.js';
import { createContextReply } from './context-reply.js';
import { type DeliveryTrace, endTurn } from './delivery.js';
import { nothingToCancel, refuseAsk } from './questions.js';
import { sendFileReply } from './rich-replies.js';
import { keepTyping, type StopTyping } from './typing.js';

/** What the context says about where the message was sent. */
export interface Addressing {
  mentioned: boolean;
  isGroup: boolean;
  isDirect: boolean;
}

const MAX_REMEMBERED = 10_000;

/**
 * The refusal of a reply once the run's signal fired (interrupted, its lock lost, past maxHandlerMs):
 * a newer run answers the conversation now, so nothing of this one's may be sent. `undefined` while
 * the run may still reply.
 */
function refusedAfterStop(signal: AbortSignal, what: string): Promise<never> | undefined {
  if (!signal.aborted) return undefined;
  const why = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
  return Promise.reject(
    new RequestAbortedError(`${what} was refused: this run was stopped. ${why}`, { cause: signal.reason }),
  );
}

// The three answers there are, made once (the context copies their fields).
const IN_GROUP: Addressing = Object.freeze({ mentioned: false, isGroup: true, isDirect: false });
const NAMED_IN_GROUP: Addressing = Object.freeze({ mentioned: true, isGroup: true, isDirect: false });
const NAMED_DIRECT: Addressing = Object.freeze({ mentioned: true, isGroup: false, isDirect: true });

/**
 * Answers the addressing of a message, asking the service at most once per conversation: at once
 * when nothing needs asking (the usual case), a promise when the service is asked. @internal
 */
export function createKindCache(client: AgentClient) {
  const kinds = new Map<string, string>();
  const ask = async (conversationId: string): Promise<Addressing> => {
    const { conversation } = await client.conversations.retrieve(conversationId);
    // The agent's read shape has a counterpart user in a one-to-one conversation, none in a group.
    // `kind` is not in SPEC's agent read shape: read it if a service sends it anyway.
    const shown = (conversation as { kind?: unknown }).kind;
    const kind = typeof shown === 'string' ? shown : conversation.counterpart_user ? 'agent' : 'group';
    if (kinds.size >= MAX_REMEMBERED) kinds.delete(kinds.keys().next().value ?? '');
    kinds.set(conversationId, kind);
    return kind === 'group' ? NAMED_IN_GROUP : NAMED_DIRECT;
  };
  return (event: MessageReceivedEvent): Addressing | Promise<Addressing> => {
    const mentioned = event.message.invoked_agents?.includes(event.agentId) === true;
    if (!mentioned) return IN_GROUP;
    const kind = kinds.get(event.conversationId);
    if (kind === undefined) return ask(event.conversationId);
    return kind === 'group' ? NAMED_IN_GROUP : NAMED_DIRECT;
  };
}

/** What the bot passes in. @internal */
export interface MessageContextDeps {
  event: MessageReceivedEvent;
  webhookId: string;
  client: AgentClient;
  /** Fires when the run should stop; passed to every reply. */
  signal: AbortSignal;
  /** The messages of the run, oldest first (the event's message last). */
  batch: readonly Message[];
  /** The bot store: a file reply remembers its upload there. */
  store: BotStore;
  /** Whether the message names the agent, and the kind of its conversation. */
  addressing: Addressing;
  /** A streamed reply's writer lease unless the reply sets its own. */
  writerLeaseMs: number;
  typingRenewMs: number | undefined;
  /** Whether the bot keeps sessions (`createBot({ session })`); without them `ctx.session` throws. */
  sessions: boolean;
  /** Logs a failure that must not fail the handler (a typing call). */
  warn(message: string, fields: Record<string, unknown>): void;
}

/** The text parts of a message, joined with newlines as the service joins them for `fallback_text`. */
export function messageText(event: MessageReceivedEvent): string {
  let text: string | undefined;
  for (const part of event.message.parts ?? []) {
    if (part.type !== 'text' || typeof part.text !== 'string') continue;
    text = text === undefined ? part.text : `${text}\n${part.text}`;
  }
  return text ?? '';
}

const refuseSession = (): never => {
  throw new ValidationError(
    [{ field: 'session', message: 'ctx.session needs the session option: createBot({ session: {} })' }],
    'ctx.session',
  );
};

/**
 * What the context of a bot without `session` inherits: a `session` that throws when read or set
 * instead of being an object nobody saves (a write would be lost without a word). On the prototype,
 * so it is not enumerable (spreading or printing the context does not throw) and costs nothing per
 * message.
 */
const SESSIONLESS: object = Object.defineProperty({}, 'session', {
  get: refuseSession,
  set: refuseSession,
  enumerable: false,
  configurable: true,
});

/**
 * Builds the context and the `finish` the bot calls once the handlers settled: it stops every typing
 * indicator still running, so a handler that forgot to stop one does not leave it on. What a handler
 * may never use is made on first use: the reply machinery, the set of typing indicators.
 * @internal
 */
export function createMessageContext(deps: MessageContextDeps): {
  ctx: MessageContext;
  /** A promise while typing indicators or replies are still to end; `undefined` when none is. */
  finish: () => Promise<void> | undefined;
} {
  const { event, webhookId, client, signal, store } = deps;
  const conversationId = event.conversationId;
  const message = event.message;
  let typingStops: Set<StopTyping> | undefined;
  let replies = 0;

  // The n-th reply of a handler gets the same key on every delivery of the event: a redelivery
  // replays the first answer instead of sending again, as long as the handler replies in the same order.
  const nextReplyKey = () => {
    replies += 1;
    return idempotencyKeyFor(webhookId, replies === 1 ? 'reply' : `reply-${replies}`);
  };

  // Made on first use, as everything below that a handler may never use.
  const typingFailed = (error: unknown) => deps.warn('a typing call failed', { webhookId, error });

  // ctx.reply's body lives in context-reply.ts (issue 11's outcomes for bots), made at the first reply.
  let contextReply: ReturnType<typeof createContextReply> | undefined;
  const replier = () =>
    (contextReply ??= createContextReply({
      client,
      conversationId,
      messageId: message.id,
      nextReplyKey,
      signal,
      store,
      writerLeaseMs: deps.writerLeaseMs,
      typingRenewMs: deps.typingRenewMs,
      typingShown: () => (typingStops?.size ?? 0) > 0,
      warn: typingFailed,
    }));

  // Loaded by the sessions step before the handlers run; inherited from SESSIONLESS without sessions.
  const ctx = Object.create(deps.sessions ? Object.prototype : SESSIONLESS) as MessageContext;
  ctx.event = event;
  ctx.webhookId = webhookId;
  ctx.client = client;
  ctx.signal = signal;
  ctx.mentioned = deps.addressing.mentioned;
  ctx.isGroup = deps.addressing.isGroup;
  ctx.isDirect = deps.addressing.isDirect;
  if (event.postback) {
    const { actionId, value, messageId } = event.postback;
    ctx.action = { actionId, value, messageId };
  }
  ctx.message = message;
  ctx.messages = deps.batch;
  if (deps.sessions) ctx.session = {};
  ctx.text = messageText(event);
  ctx.conversationId = conversationId;
  ctx.reply = (input, options) =>
    refusedAfterStop(signal, 'ctx.reply') ??
    inReplySpan(typeof input === 'string' ? 'send' : 'stream', () => replier().reply(input, options));
  ctx.replyWithFile = (data, options) => {
    const refused = refusedAfterStop(signal, 'ctx.replyWithFile');
    if (refused) return refused;
    // Numbered with the text replies, so a redelivery that replies in the same order replays each.
    const idempotencyKey = nextReplyKey();
    return inReplySpan('file', () =>
      sendFileReply(
        { client, store, conversationId, idempotencyKey, replyToMessageId: message.id, signal },
        data,
        options,
      ),
    );
  };
  ctx.typing = async () => {
    const stop = await keepTyping((state) => client.conversations.typing(conversationId, { state }), {
      ...(deps.typingRenewMs === undefined ? {} : { renewMs: deps.typingRenewMs }),
      onError: typingFailed,
    });
    typingStops ??= new Set();
    typingStops.add(stop);
    return stop;
  };
  ctx.react = (emoji) => client.messages.react(message.id, { emoji, action: 'add' });
  ctx.markRead = () => client.conversations.markRead(conversationId, { message_id: message.id });
  // A bot that declared no question: every name is unknown, and there is never one to cancel (the
  // questions replace both once one is declared).
  ctx.ask = refuseAsk;
  ctx.cancelQuestion = nothingToCancel;
  ctx.history = (options) =>
    conversationHistory(
      { client, conversationId, agentId: event.agentId, batch: deps.batch.length ? deps.batch : [message] },
      options,
    );

  const finish = async () => {
    if (typingStops) await Promise.all([...typingStops].map((stop) => stop()));
    await contextReply?.finish();
  };
  // Nothing to wait for when the handler neither replied nor showed typing: no promise at all.
  return { ctx, finish: () => (typingStops || contextReply ? finish() : undefined) };
}

/** What a run needs from the bot. @internal */
export interface RunDeps {
  client: AgentClient;
  store: BotStore;
  /** A streamed reply's writer lease unless the reply sets its own: the bot's `lockTtlMs`. */
  writerLeaseMs: number;
  typingRenewMs: number | undefined;
  dispatch(ctx: EventContext): Promise<void>;
  /** At once when known, a promise when the service must be asked. */
  addressing(event: MessageReceivedEvent): Addressing | Promise<Addressing>;
  warn(message: string, fields: Record<string, unknown>): void;
  /** Wraps the dispatch of a message with per-conversation state (sessions); optional. */
  around?(ctx: MessageContext, run: () => Promise<void>): Promise<void>;
  /**
   * Gives the context the `ctx.ask` and `ctx.cancelQuestion` of the bot's questions (questions.ts);
   * unset until a question is declared, and the context keeps the ones that refuse.
   */
  attach?: ((ctx: MessageContext) => void) | undefined;
}

/** Builds the `run` the lanes call for each batch. @internal */
export function createRun(deps: RunDeps) {
  const { client } = deps;
  const runHandlers = async (
    items: readonly { webhookId: string; event: WebhookEvent }[],
    signal: AbortSignal,
    span: Traced | undefined,
  ) => {
    const last = items.at(-1);
    if (!last) return;
    const { event, webhookId } = last;
    if (event.type !== 'message.received') {
      const ctx = { event, webhookId, client, signal };
      bindSpan(ctx, span);
      await deps.dispatch(ctx);
      return;
    }
    const received = event as MessageReceivedEvent;
    const known = deps.addressing(received);
    const made = createMessageContext({
      event: received,
      webhookId,
      client,
      store: deps.store,
      signal,
      batch:
        items.length === 1
          ? [received.message]
          : items.map((item) => (item.event as MessageReceivedEvent).message),
      addressing: known instanceof Promise ? await known : known,
      writerLeaseMs: deps.writerLeaseMs,
      typingRenewMs: deps.typingRenewMs,
      // Sessions are the one `around` step: without it no state is loaded, and ctx.session says so.
      sessions: deps.around !== undefined,
      warn: deps.warn,
    });
    deps.attach?.(made.ctx);
    const ctx = made.ctx as EventContext;
    bindSpan(ctx, span);
    try {
      await (deps.around ? deps.around(made.ctx, () => deps.dispatch(ctx)) : deps.dispatch(ctx));
    } finally {
      const finishing = made.finish();
      if (finishing) await finishing;
    }
  };
  // The run's span, under its newest delivery's span (else under whatever is active): the author's
  // own spans, a model SDK's among them, nest under it.
  return async (
    items: readonly { webhookId: string; event: WebhookEvent; trace?: DeliveryTrace }[],
    signal: AbortSignal,
  ) => {
    const last = items.at(-1);
    if (!last) return;
    for (const item of items) endTurn(item.trace);
    const span = childSpan(
      'agent-messaging.handler',
      {
        'webhook.id': last.webhookId,
        'event.type': last.event.type,
        'conversation.id': (last.event as { conversationId?: string }).conversationId,
        messages: items.length,
      },
      last.trace?.delivery,
    );
    return traced(span, signal, () => runHandlers(items, signal, span));
  };
}

/**
 * Runs `fn` inside `span` and ends the span with the run: with an error status when it threw, or when
 * the run's signal fired (interrupted, lock lost, past maxHandlerMs), which ends it at once even if
 * the handler goes on ignoring the signal, so no span is left open.
 */
function traced(span: Traced | undefined, signal: AbortSignal, fn: () => Promise<void>): Promise<void> {
  return span ? tracedRun(span, signal, fn) : fn();
}

async function tracedRun(span: Traced, signal: AbortSignal, fn: () => Promise<void>): Promise<void> {
  const started = performance.now();
  let ended = false;
  const end = (error?: unknown) => {
    if (ended) return;
    ended = true;
    const outcome = error === undefined ? 'ok' : signal.aborted ? (signal.reason as Error).name : 'failed';
    annotate(span, { outcome });
    metric.handler(performance.now() - started, outcome);
    endSpan(span, error);
  };
  const onAbort = () => end(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await inSpan(span, fn);
    end(signal.aborted ? signal.reason : undefined);
  } catch (error) {
    end(error);
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Runs one reply inside its span ('agent-messaging.reply', under the active one): how it went out
 * (`send`, `stream`, or `append` once the writer fell back), its characters, its outcome and the
 * recoveries its writer made. An interrupted or failed reply ends the span with an error status.
 */
async function inReplySpan<T extends object>(
  transport: 'send' | 'stream' | 'file',
  send: () => Promise<T>,
): Promise<T> {
  const span = childSpan('agent-messaging.reply', { 'reply.transport': transport });
  if (!span) return send();
  const started = performance.now();
  try {
    const result = await inSpan(span, send);
    const { text, outcome = 'complete' } = result as { text?: string; outcome?: string };
    annotate(span, {
      'reply.outcome': outcome,
      'reply.chars': text?.length,
      'reply.recoveries': recoveriesOf(span),
      'reply.duration_ms': Math.round(performance.now() - started),
    });
    metric.reply(outcome, transport);
    endSpan(
      span,
      outcome === 'interrupted' ? new Error('the reply was cut short and marked interrupted') : undefined,
    );
    return result;
  } catch (error) {
    annotate(span, { 'reply.outcome': 'failed', 'reply.recoveries': recoveriesOf(span) });
    metric.reply('failed', transport);
    endSpan(span, error);
    throw error;
  }
}
