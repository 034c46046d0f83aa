import { type ApiPromise, apiPromise } from '../core/api-promise.js';
import type { RequestOptions } from '../core/options.js';
import type {
  AppendRequest,
  AppendResponse,
  CompleteRequest,
  CompleteResponse,
  ReactionRequest,
  ReactionResponse,
  SendMessageResponse,
  UnsendResponse,
} from '../schemas/messages.js';
import { type MessageStream, messageStreamOf } from '../streaming/message-stream.js';
import {
  checkStart,
  type ReplyOptions,
  type ReplyResult,
  type StreamBody,
  type StreamOptions,
} from '../streaming/options.js';
import { type PipeReplyOptions, pipeReply, type ReplySource } from '../streaming/pipe-reply.js';
import { startReply } from '../streaming/reply-start.js';
import type { ReplyApi, ReplyWriter } from '../streaming/reply-writer.js';
import { Conversations } from './conversations.js';
import { Resource } from './resource.js';
import { buildSendBody, type SendInput } from './send-input.js';

/** A user's messages: unsend. */
export class UserMessages extends Resource {
  /** Unsends one of the caller's own messages, within two minutes of its creation. */
  unsend(messageId: string, options?: RequestOptions): ApiPromise<UnsendResponse> {
    return this._transport.request('messages.unsend', { params: { message_id: messageId }, options });
  }
}

/** An agent's messages: send, patch a streaming message, complete, unsend, react. */
export class Messages extends UserMessages {
  /** What a reply writes through: the transport, and the history it reads back. */
  readonly #reply: ReplyApi = {
    transport: this._transport,
    conversations: new Conversations(this._transport),
  };

  /**
   * Sends a message. `{ text }` is a shorthand for one text block with the same `fallbackText`.
   * An `Idempotency-Key` is generated when none is given, and kept across retries.
   *
   * @example
   * await client.messages.send(cnv, { text: 'Hi' });
   * await client.messages.send(cnv, { content, fallbackText }, { idempotencyKey: idempotencyKeyFor(event.eventId) });
   */
  send(conversationId: string, input: SendInput, options?: RequestOptions): ApiPromise<SendMessageResponse> {
    let body: unknown;
    try {
      body = buildSendBody(input, 'messages.send');
    } catch (error) {
      return apiPromise(Promise.reject(error));
    }
    const params = { conversation_id: conversationId };
    return this._transport.request('messages.send', { params, body, options });
  }

  /** Appends text to a block of a streaming message (the fallback to Streamable HTTP). */
  append(
    messageId: string,
    blockId: string,
    body: AppendRequest,
    options?: RequestOptions,
  ): ApiPromise<AppendResponse> {
    const params = { message_id: messageId, block_id: blockId };
    return this._transport.request('messages.append', { params, body, options });
  }

  /** Completes a streaming message: `{ status: 'sent', fallbackText? }`. */
  complete(messageId: string, body: CompleteRequest, options?: RequestOptions): ApiPromise<CompleteResponse> {
    return this._transport.request('messages.complete', { params: { message_id: messageId }, body, options });
  }

  /**
   * Starts a streamed message (`?stream=true`) and returns its events as the service applies them:
   * `message.started`, `message.patch`..., `message.completed`. Read it once; `break` closes it.
   *
   * @example
   * const stream = await client.messages.stream(cnv, { replyToMessageId });
   * for await (const event of stream) if (event.type === 'message.patch') console.log(event.patch.value);
   */
  async stream(conversationId: string, body?: StreamBody, options?: StreamOptions): Promise<MessageStream> {
    const operation = 'messages.stream';
    // The key is fixed before the first attempt: a retry replays the same `message.started`.
    const { checked, shape, key } = checkStart(conversationId, body, options, operation);
    const response = await this._transport.raw('messages.send', {
      params: { conversation_id: conversationId },
      query: { stream: true },
      body: shape,
      accept: 'text/event-stream',
      operation,
      options: { ...checked.request, idempotencyKey: key },
    });
    return messageStreamOf(response, operation, {
      idleTimeoutMs: checked.idleTimeoutMs,
      signal: checked.request.signal,
    });
  }

  /**
   * Starts a reply to write into as text arrives: Streamable HTTP when it can, append and complete
   * when it cannot (`transport: 'auto' | 'stream' | 'append'`); nothing written is lost or doubled.
   *
   * @example
   * const reply = await client.messages.startReply(cnv, { replyToMessageId });
   * await reply.write('Hello');
   * const { message_id, revision, text } = await reply.complete();
   */
  async startReply(conversationId: string, body?: StreamBody, options?: ReplyOptions): Promise<ReplyWriter> {
    return startReply(this.#reply, conversationId, body, options);
  }

  /**
   * Pipes text chunks, or a model stream (OpenAI, AI SDK `streamText`, Anthropic: see toTextStream),
   * into a reply and completes it; if the source throws, the reply is completed with what was
   * written and the error is rethrown. Tool calls reach `onToolCall`, never the text.
   *
   * @example
   * await client.messages.reply(cnv, await openai.chat.completions.create({ model, messages, stream: true }));
   */
  async reply(conversationId: string, chunks: ReplySource, options?: PipeReplyOptions): Promise<ReplyResult> {
    return pipeReply(this.#reply, conversationId, chunks, options);
  }

  /** Adds or removes a reaction: `{ emoji, action: 'add' | 'remove' }`. */
  react(messageId: string, body: ReactionRequest, options?: RequestOptions): ApiPromise<ReactionResponse> {
    return this._transport.request('messages.react', { params: { message_id: messageId }, body, options });
  }
}
