// Chat SDK's platform Adapter over the Agent Messaging Service. Deliveries go through `createBot`
// (verification, dedupe by webhook-id, the status codes the service's retries rely on) and then
// into Chat SDK; posts and streams go through the client with keys derived from the delivery.
//
// Chat SDK names a conversation by a thread id string. Ours carries the conversation's kind as the
// adapter learned it: `ams:agent:cnv_...` is a user's own conversation with the agent (a direct
// message), `ams:group:cnv_...` a group. Anyone can write such a string, so the adapter decides
// `isDM` from what the service said of the conversation, never from the string.

import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Adapter,
  type AdapterPostableMessage,
  type Attachment,
  type CardElement,
  type ChatInstance,
  Message as ChatMessage,
  cardChildToFallbackText,
  defaultEmojiResolver,
  type EmojiValue,
  type FetchOptions,
  type FetchResult,
  type FormattedContent,
  isCardElement,
  NotImplementedError,
  parseMarkdown,
  type RawMessage,
  type StreamChunk,
  type StreamOptions,
  stringifyMarkdown,
  type ThreadInfo,
  type WebhookOptions,
} from 'chat';
import * as z from 'zod/mini';
import type { AgentClient } from '../client/agent-client.js';
import { ValidationError } from '../core/errors.js';
import { idempotencyKeyFor } from '../core/idempotency.js';
import { parseInput } from '../core/validate.js';
import { AgentId } from '../schemas/common.js';
import type { Message, SendBlock, SendMessageResponse } from '../schemas/messages.js';
import type { ReplyResult } from '../streaming/options.js';
import { createBot } from '../webhooks/bot.js';
import type { Bot, BotOptions, MessageContext } from '../webhooks/bot-types.js';

/** Options of `createAgentMessagingAdapter`. */
export interface ChatSdkAdapterOptions extends BotOptions {
  /**
   * The agent's id (`agt_...`), so history read before the first delivery knows which messages are
   * the agent's own; learned from the first delivery otherwise.
   */
  agentId?: string;
  /** The bot's name in Chat SDK (mention matching, logs); the Chat instance's `userName` by default. */
  userName?: string;
}

const AdapterOptions = z.looseObject({
  agentId: z.optional(AgentId),
  userName: z.optional(z.string().check(z.regex(/\S/, { error: 'must be a non-blank string' }))),
});

/** The kinds of conversation an agent takes part in. */
export type ConversationKind = 'agent' | 'group';

/** What a thread id holds. */
export interface AgentMessagingThread {
  kind: ConversationKind;
  conversationId: string;
}

/**
 * `raw` of what the adapter hands Chat SDK: the service's Message for received and fetched messages,
 * the send answer's message for a post, the reply's result for a stream.
 */
export type AgentMessagingRawMessage = Message | SendMessageResponse['message'] | ReplyResult;

const MAX_PAGE = 100;
const DEFAULT_PAGE = 50;
const KIND_CACHE_SIZE = 10_000;

/** Chat SDK's `Adapter` for the Agent Messaging Service. */
export class AgentMessagingAdapter implements Adapter<AgentMessagingThread, AgentMessagingRawMessage> {
  readonly name = 'agent-messaging';
  readonly lockScope = 'thread' as const;
  /** The agent's id: given, or learned from the first delivery (optional, as Chat SDK's Adapter declares it). */
  botUserId?: string;
  userName: string;

  readonly client: AgentClient;
  readonly #bot: Bot;
  readonly #kinds = new Map<string, ConversationKind>();
  #chat: ChatInstance | undefined;

  constructor(options: ChatSdkAdapterOptions) {
    // The adapter's own options; the rest are the bot's, which createBot checks.
    parseInput(AdapterOptions, options, 'createAgentMessagingAdapter');
    const { agentId, userName, ...bot } = options;
    if (agentId !== undefined) this.botUserId = agentId;
    this.userName = userName ?? 'agent';
    this.#bot = createBot(bot);
    this.client = this.#bot.client;
    this.#bot.on('message.received', (ctx) => this.#deliver(ctx));
  }

  async initialize(chat: ChatInstance): Promise<void> {
    this.#chat = chat;
    const name = chat.getUserName?.();
    if (typeof name === 'string' && name.trim() !== '' && this.userName === 'agent') this.userName = name;
  }

  /**
   * Verifies a delivery and hands it to Chat SDK. Answers as `bot.fetch` does: 2xx once handled (or a
   * duplicate), 4xx when verification fails, 5xx when a handler threw, so the service retries it.
   */
  handleWebhook(request: Request, options?: WebhookOptions): Promise<Response> {
    const { waitUntil } = options ?? {};
    return this.#bot.fetch(request, undefined, waitUntil ? { waitUntil } : undefined);
  }

  async #deliver(ctx: MessageContext): Promise<void> {
    const chat = this.#chat;
    if (!chat)
      throw new Error('agent-messaging chat-sdk adapter: the Chat instance has not initialized it yet');
    this.botUserId ??= ctx.event.agentId;
    const kind = await this.#kindOf(ctx.conversationId);
    const threadId = this.encodeThreadId({ kind, conversationId: ctx.conversationId });
    const message = toChatMessage(ctx.message, threadId, ctx.event.agentId);
    const { postback } = ctx.event;
    await turns.run({ webhookId: ctx.webhookId, posts: 0 }, async () => {
      if (postback) {
        await chat.processAction(
          {
            adapter: this,
            actionId: postback.actionId,
            ...(postback.value === NO_VALUE ? {} : { value: postback.value }),
            messageId: postback.messageId,
            threadId,
            user: message.author,
            raw: ctx.event,
          },
          undefined,
        );
        return;
      }
      // The bot's store dedupes by webhook-id for the service's whole retry schedule; Chat SDK's own
      // cache (minutes, keyed by message id) would also drop the retry of a delivery whose handler failed.
      await chat.processMessage(this, threadId, message, { deduplicate: false });
    });
  }

  // A conversation's kind as the service tells it: a thread id's own `agent` or `group` is anyone's
  // string (a stored id, a link), so it never decides whether a conversation is a direct one.
  async #kindOf(conversationId: string): Promise<ConversationKind> {
    const known = this.#kinds.get(conversationId);
    if (known) return known;
    const { conversation } = await this.client.conversations.retrieve(conversationId);
    return this.#learn(conversationId, conversation);
  }

  #learn(conversationId: string, conversation: { counterpart_user?: unknown }): ConversationKind {
    // The agent's view names the user of a one-to-one conversation; a group has none.
    const kind: ConversationKind = conversation.counterpart_user ? 'agent' : 'group';
    if (this.#kinds.size >= KIND_CACHE_SIZE) this.#kinds.delete(this.#kinds.keys().next().value as string);
    this.#kinds.set(conversationId, kind);
    return kind;
  }

  /** `ams:<kind>:<conversation id>`. */
  encodeThreadId({ kind, conversationId }: AgentMessagingThread): string {
    return `ams:${kind}:${conversationId}`;
  }

  /** The kind and conversation id of a thread id; a ValidationError for anything else. */
  decodeThreadId(threadId: string): AgentMessagingThread {
    const [prefix, kind, conversationId, ...rest] = String(threadId).split(':');
    if (prefix !== 'ams' || (kind !== 'agent' && kind !== 'group') || !conversationId || rest.length > 0) {
      const message = `must look like ams:agent:cnv_... or ams:group:cnv_..., got ${JSON.stringify(threadId)}`;
      throw new ValidationError([{ field: 'threadId', message }], 'chat-sdk');
    }
    return { kind, conversationId };
  }

  /** A conversation is both the thread and the channel. */
  channelIdFromThreadId(threadId: string): string {
    this.decodeThreadId(threadId);
    return threadId;
  }

  /** True for a conversation the service showed to be one user's with the agent; unknown ones are not. */
  isDM(threadId: string): boolean {
    return this.#kinds.get(this.decodeThreadId(threadId).conversationId) === 'agent';
  }

  parseMessage(raw: AgentMessagingRawMessage): ChatMessage<AgentMessagingRawMessage> {
    if (!('conversation_id' in raw)) {
      throw new ValidationError(
        [{ field: 'raw', message: 'must be a Message of history or of a delivery' }],
        'parseMessage',
      );
    }
    const message = raw as Message;
    const kind = this.#kinds.get(message.conversation_id) ?? 'group';
    const threadId = this.encodeThreadId({ kind, conversationId: message.conversation_id });
    return toChatMessage(message, threadId, this.botUserId ?? '');
  }

  renderFormatted(content: FormattedContent): string {
    return stringifyMarkdown(content).trimEnd();
  }

  async postMessage(
    threadId: string,
    message: AdapterPostableMessage,
  ): Promise<RawMessage<AgentMessagingRawMessage>> {
    const { conversationId } = this.decodeThreadId(threadId);
    const key = nextPostKey();
    const wrapper =
      typeof message === 'object' && 'card' in message && isCardElement(message.card) ? message : undefined;
    const card = isCardElement(message) ? message : wrapper?.card;
    const text = card ? wrapper?.fallbackText || cardText(card) : postableText(message);
    const content: SendBlock[] = text === '' ? [] : [{ type: 'text', text }];
    const files = typeof message === 'object' && 'files' in message ? (message.files ?? []) : [];
    for (const [index, file] of files.entries()) {
      const mime = file.mimeType ?? 'application/octet-stream';
      const uploaded = await this.client.attachments.upload(
        file.data,
        { name: file.filename, mime_type: mime },
        key ? { idempotencyKey: `${key}:file:${index}` } : undefined,
      );
      content.push({
        type: mime.startsWith('image/') ? 'image' : 'file',
        attachmentId: uploaded.attachment_id,
      });
    }
    // A card's enabled buttons are quick replies whose clicks come back as postbacks.
    const actions = (card ? buttonsOf(card.children) : []).map((button) => ({
      actionId: button.id,
      label: button.label,
      behavior: { type: 'postback' as const, value: button.value || NO_VALUE },
    }));
    if (actions.length > 0) {
      content.push({ type: 'actions', layout: 'quick_replies', actions });
    }
    const fallbackText = text || actions.map((action) => action.label).join(' | ');
    const { message: sent } = await this.client.messages.send(
      conversationId,
      { content, ...(fallbackText ? { fallbackText } : {}) },
      key ? { idempotencyKey: key } : undefined,
    );
    return { id: sent.id, threadId, raw: sent };
  }

  /** Streams over one request (Streamable HTTP), or append and complete; never post and edit. */
  async stream(
    threadId: string,
    textStream: AsyncIterable<string | StreamChunk>,
    options?: StreamOptions,
  ): Promise<RawMessage<AgentMessagingRawMessage>> {
    const { conversationId } = this.decodeThreadId(threadId);
    const key = nextPostKey();
    const result = await this.client.messages.reply(conversationId, textOf(textStream), {
      ...(key ? { idempotencyKey: key } : {}),
      ...(options?.signal ? { signal: options.signal } : {}),
    });
    return { id: result.message_id, threadId, raw: result };
  }

  /** The service keeps no edits of an agent's message: Chat SDK's NotImplementedError. */
  async editMessage(
    _threadId: string,
    _messageId: string,
    _message: AdapterPostableMessage,
  ): Promise<RawMessage<AgentMessagingRawMessage>> {
    throw new NotImplementedError('The Agent Messaging Service cannot edit a sent message', 'editMessage');
  }

  /** Unsends the agent's message; two minutes after it was sent the service refuses (an ApiError). */
  async deleteMessage(threadId: string, messageId: string): Promise<void> {
    this.decodeThreadId(threadId);
    await this.client.messages.unsend(messageId);
  }

  addReaction(threadId: string, messageId: string, emoji: EmojiValue | string): Promise<void> {
    return this.#react(threadId, messageId, emoji, 'add');
  }

  removeReaction(threadId: string, messageId: string, emoji: EmojiValue | string): Promise<void> {
    return this.#react(threadId, messageId, emoji, 'remove');
  }

  // The service's reactions are Unicode emoji; Chat SDK's names (`thumbs_up`, `emoji.fire`) map to them.
  async #react(threadId: string, messageId: string, emoji: EmojiValue | string, action: 'add' | 'remove') {
    this.decodeThreadId(threadId);
    await this.client.messages.react(messageId, { emoji: defaultEmojiResolver.toGChat(emoji), action });
  }

  async startTyping(threadId: string): Promise<void> {
    await this.client.conversations.typing(this.decodeThreadId(threadId).conversationId, { state: 'start' });
  }

  async markAsRead(threadId: string, messageId: string): Promise<void> {
    await this.client.conversations.markRead(this.decodeThreadId(threadId).conversationId, {
      message_id: messageId,
    });
  }

  /**
   * A page of history, oldest first within the page. `backward` (default) pages from the newest
   * message towards older ones; `forward` from the first message towards newer ones. Sequences grow
   * by one per message (tombstones included), so a cursor is a sequence number.
   */
  async fetchMessages(
    threadId: string,
    options: FetchOptions = {},
  ): Promise<FetchResult<AgentMessagingRawMessage>> {
    const { conversationId } = this.decodeThreadId(threadId);
    // Messages carry the thread id of the kind the service told, whatever `threadId` said.
    const id = this.encodeThreadId({ kind: await this.#kindOf(conversationId), conversationId });
    const limit = Math.min(Math.max(1, Math.trunc(options.limit ?? DEFAULT_PAGE)), MAX_PAGE);
    const cursor = options.cursor === undefined ? undefined : Number(options.cursor);
    const forward = options.direction === 'forward';
    const before = forward ? (cursor ?? 0) + limit + 1 : cursor;
    const { messages } = await this.client.conversations.listMessages(conversationId, {
      limit,
      ...(before === undefined ? {} : { before_sequence: before }),
    });
    const page = [...messages]
      .filter((m) => !forward || m.sequence > (cursor ?? 0))
      .sort((a, b) => a.sequence - b.sequence);
    const edge = forward ? page.at(-1) : page[0];
    // Forward, a full page of newer messages may have more after it; backward, a full page below 1 may.
    const more =
      edge !== undefined &&
      (forward ? page.length === limit : messages.length === limit && edge.sequence > 1);
    return {
      messages: page
        .filter((m) => m.status !== 'deleted')
        .map((m) => toChatMessage(m, id, this.botUserId ?? '')),
      ...(more ? { nextCursor: String(edge.sequence) } : {}),
    };
  }

  async fetchThread(threadId: string): Promise<ThreadInfo> {
    const { conversationId } = this.decodeThreadId(threadId);
    const { conversation } = await this.client.conversations.retrieve(conversationId);
    return {
      id: threadId,
      channelId: threadId,
      ...(conversation.title ? { channelName: conversation.title } : {}),
      isDM: this.#learn(conversationId, conversation) === 'agent',
      metadata: { conversation },
    };
  }
}

// The delivery a Chat SDK handler is answering. Every reply it posts takes a key derived from the
// delivery's webhook-id and the reply's position in the handler, so the service's redelivery of the
// same event (up to about 18 hours later) replays those replies instead of posting them twice.
const turns = new AsyncLocalStorage<{ webhookId: string; posts: number }>();

/**
 * The Idempotency-Key of the next post of the current turn, or `undefined` outside one (a post
 * made on its own, which then gets a fresh key from the client).
 */
function nextPostKey(): string | undefined {
  const turn = turns.getStore();
  if (!turn) return undefined;
  turn.posts += 1;
  return idempotencyKeyFor(turn.webhookId, `chat-sdk:post:${turn.posts}`);
}

/**
 * A service Message of `thread` as Chat SDK's Message, seen by the agent `agentId`: the author is
 * "me" when the agent sent it, a mention when the service lists the agent in `invoked_agents`
 * (PROTOCOL.md section 14). The text a user sees: text parts joined by newlines, the fallback text
 * when there are none; a file part names its attachment (the bytes are fetched through the client).
 */
function toChatMessage(
  message: Message,
  threadId: string,
  agentId: string,
): ChatMessage<AgentMessagingRawMessage> {
  const parts = message.parts ?? [];
  const texts = parts.filter((part) => typeof part.text === 'string').map((part) => part.text);
  const text = texts.length > 0 ? texts.join('\n') : (message.fallback_text ?? '');
  const attachments: Attachment[] = parts
    .filter((part) => part.attachment_id !== undefined)
    .map((part) => ({ type: part.type === 'image' ? 'image' : 'file', name: String(part.attachment_id) }));
  const senderId = message.sender.id;
  const isMe = senderId === agentId;
  return new ChatMessage<AgentMessagingRawMessage>({
    id: message.id,
    threadId,
    text,
    formatted: parseMarkdown(text),
    raw: message,
    author: {
      userId: senderId,
      userName: senderId,
      fullName: senderId,
      isBot: isMe || senderId.startsWith('agt_') ? true : senderId.startsWith('usr_') ? false : 'unknown',
      isMe,
    },
    metadata: {
      dateSent: new Date(message.created_at),
      edited: Boolean(message.edited_at),
      ...(message.edited_at ? { editedAt: new Date(message.edited_at) } : {}),
    },
    attachments,
    // The service decides mentions (the `@handle` rule); only a message it names us in is one.
    isMention: !isMe && (message.invoked_agents ?? []).includes(agentId),
  });
}

/** Text of a Chat SDK stream: strings, and the text of `markdown_text` chunks; progress chunks are not text. */
async function* textOf(stream: AsyncIterable<string | StreamChunk>): AsyncIterable<string> {
  for await (const chunk of stream) {
    if (typeof chunk === 'string') yield chunk;
    else if (chunk.type === 'markdown_text') yield chunk.text;
  }
}

// What a Chat SDK bot posts, as the service's send shape. Text, markdown and ASTs become one text
// block (the service shows markdown source as the user's client renders it); a card becomes its
// text plus an `actions` block whose buttons are postbacks (PROTOCOL.md section 14), and every
// card element the service has no block for becomes fallback text. Files are uploaded first.

/** A postback's value when the button has none: the service requires a non-empty value. */
const NO_VALUE = '\u0000';

type Button = { type: 'button'; id: string; label: string; value?: string; disabled?: boolean };

// The enabled buttons of a card, in its actions blocks and their sections.
function buttonsOf(children: readonly { type: string; children?: unknown }[]): Button[] {
  return children.flatMap((child) => {
    const items = (Array.isArray(child.children) ? child.children : []) as { type: string }[];
    if (child.type === 'section') return buttonsOf(items);
    if (child.type !== 'actions') return [];
    return (items as Button[]).filter((item) => item.type === 'button' && !item.disabled);
  });
}

// A card as text: its title, its subtitle and each element's fallback text (actions have none:
// their postback buttons have a block of their own).
function cardText(card: CardElement): string {
  return [card.title, card.subtitle, ...card.children.map(cardChildToFallbackText)]
    .filter(Boolean)
    .join('\n');
}

// The text of a postable message that is not a card.
function postableText(message: AdapterPostableMessage): string {
  if (typeof message === 'string') return message;
  if ('raw' in message) return message.raw;
  if ('markdown' in message) return message.markdown;
  if ('ast' in message) return stringifyMarkdown(message.ast).trimEnd();
  return '';
}
