import type { ApiPromise } from '../core/api-promise.js';
import { InvalidResponseError } from '../core/errors.js';
import type { RequestOptions } from '../core/options.js';
import { checkRequestOptions, parseInput, pathId } from '../core/validate.js';
import { ConversationId } from '../schemas/common.js';
import {
  type CreateDirectRequest,
  type CreateDirectResponse,
  ListMessagesQuery,
  type ListMessagesResponse,
  type ReadRequest,
  type Receipt,
  type ReceiptRequest,
  type RetrieveConversationResponse,
  type TypingRequest,
  type TypingResponse,
} from '../schemas/conversations.js';
import type { Message } from '../schemas/messages.js';
import { Resource } from './resource.js';

/** The page size `history` asks for when none is given: the largest the service allows. */
const HISTORY_PAGE_SIZE = 100;

/** An agent's conversations: read one, its history, and typing, receipts and read marks. */
export class Conversations extends Resource {
  /** Reads one conversation the agent is an active participant of (404 otherwise). */
  retrieve(conversationId: string, options?: RequestOptions): ApiPromise<RetrieveConversationResponse> {
    const params = { conversation_id: conversationId };
    return this._transport.request('conversations.retrieve', { params, options });
  }

  /**
   * One page of messages, newest first: `{ limit?: 1..100, before_sequence? }`.
   *
   * @example
   * const { messages } = await client.conversations.listMessages(cnv, { limit: 50, before_sequence: 120 });
   */
  listMessages(
    conversationId: string,
    query?: ListMessagesQuery,
    options?: RequestOptions,
  ): ApiPromise<ListMessagesResponse> {
    const params = { conversation_id: conversationId };
    return this._transport.request('conversations.listMessages', { params, query, options });
  }

  /**
   * Every message, newest first, paging backwards with `before_sequence` as the loop asks for more.
   * Bad input throws at once, before any request; leaving the loop stops the paging.
   *
   * @example
   * for await (const message of client.conversations.history(cnv)) console.log(message.sequence);
   */
  history(
    conversationId: string,
    query?: ListMessagesQuery,
    options?: RequestOptions,
  ): AsyncGenerator<Message> {
    const operation = 'conversations.history';
    pathId(ConversationId, conversationId, 'conversationId', operation);
    const start = parseInput(ListMessagesQuery, query ?? {}, operation);
    checkRequestOptions(options, operation);
    return this.#pages(conversationId, start.limit ?? HISTORY_PAGE_SIZE, start.before_sequence, options);
  }

  async *#pages(conversationId: string, limit: number, before: number | undefined, options?: RequestOptions) {
    const operation = 'conversations.history';
    for (;;) {
      const page = await this._transport.request('conversations.listMessages', {
        params: { conversation_id: conversationId },
        query: { limit, before_sequence: before },
        options,
        operation,
      });
      // A page that does not move below the last one would page forever: a bad answer, not a loop.
      const floor = before;
      const stale = floor === undefined ? undefined : page.messages.find((m) => m.sequence >= floor);
      if (stale) {
        throw new InvalidResponseError(
          `${operation}: the page for before_sequence=${before} holds sequence ${stale.sequence}; paging made no progress`,
          { status: 200 },
        );
      }
      yield* page.messages;
      // PROTOCOL.md section 7: the last page is short, or reaches sequence 1.
      if (page.messages.length < limit) return;
      const lowest = Math.min(...page.messages.map((message) => message.sequence));
      if (lowest <= 1) return;
      before = lowest;
    }
  }

  /** Shows or clears the agent's typing indicator: `{ state: 'start' | 'stop' }`. */
  typing(conversationId: string, body: TypingRequest, options?: RequestOptions): ApiPromise<TypingResponse> {
    const params = { conversation_id: conversationId };
    return this._transport.request('conversations.typing', { params, body, options });
  }

  /** Records a delivery (or read) receipt for a user's message: `{ message_id, type }`. */
  sendReceipt(conversationId: string, body: ReceiptRequest, options?: RequestOptions): ApiPromise<Receipt> {
    const params = { conversation_id: conversationId };
    return this._transport.request('conversations.sendReceipt', { params, body, options });
  }

  /** Marks a user's message read: `{ message_id }`. */
  markRead(conversationId: string, body: ReadRequest, options?: RequestOptions): ApiPromise<Receipt> {
    const params = { conversation_id: conversationId };
    return this._transport.request('conversations.markRead', { params, body, options });
  }
}

/** A user's conversations: create or reuse a direct conversation. */
export class UserConversations extends Resource {
  /**
   * Creates the direct conversation with another verified user, or returns the existing one.
   * An `Idempotency-Key` is generated when none is given, and kept across retries.
   *
   * @example
   * const { conversation } = await user.conversations.createDirect({ user_id: 'usr_...' });
   */
  createDirect(body: CreateDirectRequest, options?: RequestOptions): ApiPromise<CreateDirectResponse> {
    return this._transport.request('conversations.createDirect', { body, options });
  }
}
