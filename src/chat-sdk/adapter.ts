// Chat SDK's platform Adapter over the Agent Messaging Service. Deliveries go through `createBot`
// (verification, dedupe by webhook-id, the status codes the service's retries rely on) and then
// into Chat SDK; posts and streams go through the client with keys derived from the delivery.

import {
  type Adapter,
  type AdapterPostableMessage,
  type ChatInstance,
  type Message as ChatMessage,
  defaultEmojiResolver,
  type EmojiValue,
  type FetchOptions,
  type FetchResult,
  type FormattedContent,
  NotImplementedError,
  type RawMessage,
  type StreamChunk,
  type StreamOptions,
  stringifyMarkdown,
  type ThreadInfo,
  type WebhookOptions,
} from 'chat';
import type { AgentClient } from '../client/agent-client.js';
import { ValidationError } from '../core/errors.js';
import type { Message } from '../schemas/messages.js';
import { createBot } from '../webhooks/bot.js';
import type { Bot, MessageContext } from '../webhooks/bot-types.js';
import { type ChatSdkAdapterOptions, checkAdapterOptions } from './options.js';
import { NO_VALUE, toContent, toPostableParts } from './postable.js';
import {
  type AgentMessagingThread,
  type ConversationKind,
  decodeThreadId,
  encodeThreadId,
} from './thread-id.js';
import { type AgentMessagingRawMessage, toChatMessage } from './to-chat-message.js';
import { inTurn, nextPostKey } from './turn.js';

const MAX_PAGE = 100;
const DEFAULT_PAGE = 50;
const KIND_CACHE_SIZE = 10_000;

/** A quick-reply click, as PROTOCOL.md section 14 adds it to the webhook body. */
interface Postback {
  actionId: string;
  value: string;
  messageId: string;
}

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
    const checked = checkAdapterOptions(options);
    if (checked.agentId !== undefined) this.botUserId = checked.agentId;
    this.userName = checked.userName ?? 'agent';
    this.#bot = createBot(checked.bot);
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
    const thread: AgentMessagingThread = {
      kind: await this.#kindOf(ctx.conversationId),
      conversationId: ctx.conversationId,
    };
    const threadId = encodeThreadId(thread);
    const message = toChatMessage(ctx.message, thread, ctx.event.agentId);
    const postback = (ctx.event as { postback?: Postback }).postback;
    await inTurn(ctx.webhookId, async () => {
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

  encodeThreadId(data: AgentMessagingThread): string {
    return encodeThreadId(data);
  }

  decodeThreadId(threadId: string): AgentMessagingThread {
    return decodeThreadId(threadId);
  }

  /** A conversation is both the thread and the channel. */
  channelIdFromThreadId(threadId: string): string {
    decodeThreadId(threadId);
    return threadId;
  }

  /** True for a conversation the service showed to be one user's with the agent; unknown ones are not. */
  isDM(threadId: string): boolean {
    return this.#kinds.get(decodeThreadId(threadId).conversationId) === 'agent';
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
    return toChatMessage(message, { kind, conversationId: message.conversation_id }, this.botUserId ?? '');
  }

  renderFormatted(content: FormattedContent): string {
    return stringifyMarkdown(content).trimEnd();
  }

  async postMessage(
    threadId: string,
    message: AdapterPostableMessage,
  ): Promise<RawMessage<AgentMessagingRawMessage>> {
    const { conversationId } = decodeThreadId(threadId);
    const key = nextPostKey();
    const parts = toPostableParts(message);
    const attachments: { id: string; image: boolean }[] = [];
    for (const [index, file] of parts.files.entries()) {
      const mime = file.mimeType ?? 'application/octet-stream';
      const data = file.data instanceof Blob ? file.data : new Uint8Array(file.data as ArrayBuffer);
      const uploaded = await this.client.attachments.upload(
        data as Blob,
        { name: file.filename, mime_type: mime },
        key ? { idempotencyKey: `${key}:file:${index}` } : undefined,
      );
      attachments.push({ id: uploaded.attachment_id, image: mime.startsWith('image/') });
    }
    const content = toContent(parts, attachments);
    const fallbackText = parts.text || parts.actions.map((action) => action.label).join(' | ');
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
    const { conversationId } = decodeThreadId(threadId);
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
    decodeThreadId(threadId);
    await this.client.messages.unsend(messageId);
  }

  async addReaction(threadId: string, messageId: string, emoji: EmojiValue | string): Promise<void> {
    decodeThreadId(threadId);
    await this.client.messages.react(messageId, { emoji: toUnicode(emoji), action: 'add' });
  }

  async removeReaction(threadId: string, messageId: string, emoji: EmojiValue | string): Promise<void> {
    decodeThreadId(threadId);
    await this.client.messages.react(messageId, { emoji: toUnicode(emoji), action: 'remove' });
  }

  async startTyping(threadId: string): Promise<void> {
    await this.client.conversations.typing(decodeThreadId(threadId).conversationId, { state: 'start' });
  }

  async markAsRead(threadId: string, messageId: string): Promise<void> {
    await this.client.conversations.markRead(decodeThreadId(threadId).conversationId, {
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
    const { conversationId } = decodeThreadId(threadId);
    const thread = { kind: await this.#kindOf(conversationId), conversationId };
    const limit = Math.min(Math.max(1, Math.trunc(options.limit ?? DEFAULT_PAGE)), MAX_PAGE);
    const cursor = options.cursor === undefined ? undefined : Number(options.cursor);
    const forward = options.direction === 'forward';
    const before = forward ? (cursor ?? 0) + limit + 1 : cursor;
    const { messages } = await this.client.conversations.listMessages(thread.conversationId, {
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
        .map((m) => toChatMessage(m, thread, this.botUserId ?? '')),
      ...(more ? { nextCursor: String(edge.sequence) } : {}),
    };
  }

  async fetchThread(threadId: string): Promise<ThreadInfo> {
    const { conversationId } = decodeThreadId(threadId);
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

/** Text of a Chat SDK stream: strings, and the text of `markdown_text` chunks; progress chunks are not text. */
async function* textOf(stream: AsyncIterable<string | StreamChunk>): AsyncIterable<string> {
  for await (const chunk of stream) {
    if (typeof chunk === 'string') yield chunk;
    else if (chunk.type === 'markdown_text') yield chunk.text;
  }
}

/** The service's reactions are Unicode emoji; Chat SDK's names (`thumbs_up`, `emoji.fire`) map to them. */
function toUnicode(emoji: EmojiValue | string): string {
  return defaultEmojiResolver.toGChat(emoji);
}
