// The context of a `message.received` handler: the message, and replies that a redelivery cannot double.

import type { AgentClient } from '../client/agent-client.js';
import { ValidationError } from '../core/errors.js';
import { idempotencyKeyFor } from '../core/idempotency.js';
import { conversationHistory } from '../llm/conversation-history.js';
import type { Message } from '../schemas/messages.js';
import type { MessageReceivedEvent } from '../schemas/webhooks.js';
import type { BotStore } from '../store/bot-store.js';
import type { MessageContext } from './bot-types.js';
import { createContextReply } from './context-reply.js';
import type { Addressing } from './conversation-kind.js';
import { sendFileReply } from './rich-replies.js';
import { keepTyping, type StopTyping } from './typing.js';

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
  typingRenewMs: number | undefined;
  /** Whether the bot keeps sessions (`createBot({ session })`); without them `ctx.session` throws. */
  sessions: boolean;
  /** Reports a failure that must not fail the handler (a typing call). */
  warn(error: unknown): void;
}

/** The text parts of a message, joined with newlines as the service joins them for `fallback_text`. */
export function messageText(event: MessageReceivedEvent): string {
  const parts = event.message.parts ?? [];
  return parts
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('\n');
}

/**
 * Builds the context and the `finish` the bot calls once the handlers settled: it stops every typing
 * indicator still running, so a handler that forgot to stop one does not leave it on.
 * @internal
 */
export function createMessageContext(deps: MessageContextDeps): {
  ctx: MessageContext;
  finish: () => Promise<void>;
} {
  const { event, webhookId, client } = deps;
  const conversationId = event.conversationId;
  const message = event.message;
  const typingStops = new Set<StopTyping>();
  let replies = 0;

  // The n-th reply of a handler gets the same key on every delivery of the event: a redelivery
  // replays the first answer instead of sending again, as long as the handler replies in the same order.
  const nextReplyKey = () => {
    replies += 1;
    return idempotencyKeyFor(webhookId, replies === 1 ? 'reply' : `reply-${replies}`);
  };

  // ctx.reply's body lives in context-reply.ts (issue 11's outcomes for bots).
  const contextReply = createContextReply({
    client,
    conversationId,
    messageId: message.id,
    nextReplyKey,
    signal: deps.signal,
    store: deps.store,
    typingRenewMs: deps.typingRenewMs,
    typingShown: () => typingStops.size > 0,
    warn: deps.warn,
  });

  const ctx: MessageContext = {
    event,
    webhookId,
    client,
    signal: deps.signal,
    ...deps.addressing,
    ...(event.postback
      ? {
          action: {
            actionId: event.postback.actionId,
            value: event.postback.value,
            messageId: event.postback.messageId,
          },
        }
      : {}),
    message,
    messages: deps.batch,
    // Loaded by the sessions step before the handlers run (replaced below when the bot keeps none).
    session: {},
    text: messageText(event),
    conversationId,
    reply: contextReply.reply,
    replyWithFile: (data, options) => {
      // Numbered with the text replies, so a redelivery that replies in the same order replays each.
      const idempotencyKey = nextReplyKey();
      return sendFileReply(
        {
          client,
          store: deps.store,
          conversationId,
          idempotencyKey,
          replyToMessageId: message.id,
          signal: deps.signal,
        },
        data,
        options,
      );
    },
    async typing() {
      const stop = await keepTyping((state) => client.conversations.typing(conversationId, { state }), {
        ...(deps.typingRenewMs === undefined ? {} : { renewMs: deps.typingRenewMs }),
        onError: deps.warn,
      });
      typingStops.add(stop);
      return stop;
    },
    react: (emoji) => client.messages.react(message.id, { emoji, action: 'add' }),
    markRead: () => client.conversations.markRead(conversationId, { message_id: message.id }),
    // Before the run's first message: the model sees the batch through ctx.messages, not twice.
    history: (options) =>
      conversationHistory(
        {
          client,
          conversationId,
          agentId: event.agentId,
          beforeSequence: (deps.batch[0] ?? message).sequence,
        },
        options,
      ),
  };

  if (!deps.sessions) withoutSessions(ctx);

  const finish = async () => {
    await Promise.all([...typingStops].map((stop) => stop()));
    await contextReply.finish();
  };
  return { ctx, finish };
}

/**
 * A bot without `session` reads no state from the store on each message; its `ctx.session` throws
 * instead of being an object nobody saves (a write would be lost without a word). Not enumerable, so
 * spreading or printing the context does not throw.
 */
function withoutSessions(ctx: MessageContext): void {
  const refuse = (): never => {
    throw new ValidationError(
      [{ field: 'session', message: 'ctx.session needs the session option: createBot({ session: {} })' }],
      'ctx.session',
    );
  };
  Object.defineProperty(ctx, 'session', { get: refuse, set: refuse, enumerable: false, configurable: true });
}
