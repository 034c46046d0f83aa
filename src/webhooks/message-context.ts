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
import { ValidationError } from '../core/errors.js';
import { conversationHistory } from '../llm/conversation-history.js';
import type { MessageReceivedEvent } from '../schemas/webhooks.js';
import { annotate, childSpan, endSpan, inSpan, recordMetric, type Traced } from '../telemetry.js';
import type { BotRuntime, EventContext, MessageContext } from './bot-types.js';
import { createReplies } from './context-reply.js';
import { endTurn } from './delivery.js';
import type { Delivery } from './lanes.js';
import type { Questions } from './questions.js';
import { createSessions, type SessionOptions } from './session.js';

/** What the context says about where the message was sent. */
type Addressing = Pick<MessageContext, 'mentioned' | 'isGroup' | 'isDirect'>;

const MAX_REMEMBERED = 10_000;

// The three answers there are, made once (the context copies their fields).
const IN_GROUP: Addressing = Object.freeze({ mentioned: false, isGroup: true, isDirect: false });
const NAMED_IN_GROUP: Addressing = Object.freeze({ mentioned: true, isGroup: true, isDirect: false });
const NAMED_DIRECT: Addressing = Object.freeze({ mentioned: true, isGroup: false, isDirect: true });

/**
 * Answers the addressing of a message, asking the service at most once per conversation: at once
 * when nothing needs asking (the usual case), a promise when the service is asked.
 */
function createKindCache(client: AgentClient) {
  const known = new Map<string, Addressing>();
  const ask = async (conversationId: string): Promise<Addressing> => {
    const { conversation } = await client.conversations.retrieve(conversationId);
    // The agent's read shape has a counterpart user in a one-to-one conversation, none in a group.
    const addressing = conversation.counterpart_user ? NAMED_DIRECT : NAMED_IN_GROUP;
    if (known.size >= MAX_REMEMBERED) known.delete(known.keys().next().value ?? '');
    known.set(conversationId, addressing);
    return addressing;
  };
  return (event: MessageReceivedEvent): Addressing | Promise<Addressing> => {
    const mentioned = event.message.invoked_agents?.includes(event.agentId) === true;
    if (!mentioned) return IN_GROUP;
    return known.get(event.conversationId) ?? ask(event.conversationId);
  };
}

/** The text parts of a message, joined with newlines as the service joins them for `fallback_text`. */
function messageText(event: MessageReceivedEvent): string {
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
 * Builds the `run` the lanes call for each batch: the router's `dispatch`, the `questions` that
 * `ctx.ask` and `ctx.cancelQuestion` call (and that say whether the run ended a question), and the
 * bot's `session` option (without it no session is read or saved, and `ctx.session` throws).
 * @internal
 */
export function createRun(
  bot: BotRuntime,
  dispatch: (ctx: EventContext, span: Traced | undefined) => Promise<void>,
  questions: Questions,
  session: SessionOptions | undefined,
) {
  const { client } = bot;
  const addressing = createKindCache(client);
  // Sessions wrap the dispatch: loaded before the handlers, saved after them.
  const around = session ? createSessions(bot.store, session) : undefined;

  /** Dispatches the newest item's event; a user message's context answers every message of the batch. */
  const runHandlers = async (items: readonly Delivery[], signal: AbortSignal, span: Traced | undefined) => {
    const { event, webhookId } = items.at(-1) as Delivery;
    if (event.type !== 'message.received') {
      return dispatch({ event, webhookId, client, signal }, span);
    }
    const received = event as MessageReceivedEvent;
    const { conversationId, message } = received;
    const known = addressing(received);
    const { mentioned, isGroup, isDirect } = known instanceof Promise ? await known : known;
    // Made at the first reply (or typing): a handler may never reply, and then pays for none of it.
    let made: ReturnType<typeof createReplies> | undefined;
    const replies = () =>
      (made ??= createReplies(bot, {
        conversationId,
        messageId: message.id,
        // The n-th reply of a handler gets the same key on every delivery of the event.
        keyBase: webhookId,
        keyName: 'reply',
        signal,
        log: { webhookId },
        ended: () => questions.endOf(ctx),
      }));
    const batch = items.map((item) => (item.event as MessageReceivedEvent).message);
    // Loaded by the sessions step before the handlers run; inherited from SESSIONLESS without sessions.
    const ctx = Object.create(around ? Object.prototype : SESSIONLESS) as MessageContext;
    Object.assign(ctx, { event, webhookId, client, signal, mentioned, isGroup, isDirect });
    if (received.postback) ctx.action = received.postback;
    ctx.message = message;
    ctx.messages = batch;
    if (around) ctx.session = {};
    ctx.text = messageText(received);
    ctx.conversationId = conversationId;
    ctx.reply = (input, options) => replies().reply(input, options);
    ctx.replyWithFile = (data, options) => replies().replyWithFile(data, options);
    ctx.typing = () => replies().typing();
    ctx.ask = (name, text, options) => questions.ask(ctx, name, text, options);
    ctx.cancelQuestion = () => questions.cancel(ctx);
    ctx.react = (emoji) => client.messages.react(message.id, { emoji, action: 'add' });
    ctx.markRead = () => client.conversations.markRead(conversationId, { message_id: message.id });
    ctx.history = (options) =>
      conversationHistory({ client, conversationId, agentId: received.agentId, batch }, options);
    try {
      await (around ? around(ctx, () => dispatch(ctx, span)) : dispatch(ctx, span));
    } finally {
      // Stops every typing indicator still running, so a handler that forgot one does not leave it on.
      const finishing = made?.finish();
      if (finishing) await finishing;
    }
  };

  // The run's span, under its newest delivery's span (else under whatever is active): the author's
  // own spans, a model SDK's among them, nest under it.
  return async (items: readonly Delivery[], signal: AbortSignal) => {
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
    const run = () => runHandlers(items, signal, span);
    return span || last.trace ? traced(span, signal, run) : run();
  };
}

/**
 * Runs `fn` inside `span` (when traced), records how long it ran and ends the span with the run: with
 * an error status when it threw, or when the run's signal fired (interrupted, lock lost, past
 * maxHandlerMs), which ends it at once even if the handler goes on ignoring the signal, so no span is
 * left open.
 */
async function traced(span: Traced | undefined, signal: AbortSignal, fn: () => Promise<void>): Promise<void> {
  const started = performance.now();
  let ended = false;
  const end = (error?: unknown) => {
    if (ended) return;
    ended = true;
    const outcome = error === undefined ? 'ok' : signal.aborted ? (signal.reason as Error).name : 'failed';
    annotate(span, { outcome });
    recordMetric('handler.duration', performance.now() - started, { outcome });
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
