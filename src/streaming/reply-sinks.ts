// Where a reply's text goes once the message exists: patch lines of the open Streamable HTTP
// request, or the append and complete endpoints; and the read-back that says what was applied.

import type * as z from 'zod/mini';
import { AgentMessagingError, ConnectionError } from '../core/errors.js';
import type { RequestOptions } from '../core/options.js';
import type { Transport } from '../core/transport.js';
import type { Conversations } from '../resources/conversations.js';
import type { Messages } from '../resources/messages.js';
import type { Message, MessageStatus } from '../schemas/messages.js';
import type { StreamEvent } from '../schemas/stream.js';
import type { NdjsonBody } from './ndjson-body.js';

/**
 * The parts of a client a reply uses: the resources for append, complete and history, and the
 * transport for the streamed start, which no JSON method covers.
 * @internal
 */
export interface ReplyApi {
  readonly transport: Transport;
  readonly messages: Pick<Messages, 'append' | 'complete'>;
  readonly conversations: Pick<Conversations, 'history'>;
}

/** What a completion answers. @internal */
export interface Completion {
  status: z.output<typeof MessageStatus>;
  revision: number;
}

/** One way of feeding the message. A failure may leave a send half-applied: the writer reads back. @internal */
export interface ReplySink {
  readonly kind: 'stream' | 'append';
  append(text: string): Promise<void>;
  complete(fallbackText: string): Promise<Completion>;
  /** Drops the connection, if any; the message itself is left as it is. */
  close(reason?: unknown): void;
}

/** The ids a sink writes to. @internal */
export interface SinkTarget {
  messageId: string;
  blockId: string;
}

/**
 * Patch lines on the open NDJSON request. The answer is read all along: each echoed patch
 * acknowledges text, and `append` waits while more than `window` characters are unacknowledged,
 * so a stalled service slows the writer down instead of filling the pipe.
 * @internal
 */
export class StreamSink implements ReplySink {
  readonly kind = 'stream';
  readonly #target: SinkTarget;
  readonly #body: NdjsonBody;
  readonly #events: AsyncIterator<StreamEvent>;
  readonly #window: number;
  readonly #reading: Promise<void>;
  #sent = 0;
  #acknowledged = 0;
  #patches = 0;
  #completed = false;
  #broken: unknown;
  #wake: (() => void)[] = [];

  constructor(target: SinkTarget, body: NdjsonBody, events: AsyncIterator<StreamEvent>, window: number) {
    this.#target = target;
    this.#body = body;
    this.#events = events;
    this.#window = window;
    this.#reading = this.#read();
  }

  async #read(): Promise<void> {
    try {
      for (;;) {
        const next = await this.#events.next();
        if (next.done) break;
        const event = next.value;
        if (event.type === 'message.patch') {
          // Every applied append raises the revision, whichever block or input it came from.
          this.#patches += 1;
          if (event.patch.blockId === this.#target.blockId) this.#acknowledged += event.patch.value.length;
        } else if (event.type === 'message.completed') {
          this.#completed = true;
        }
        this.#notify();
      }
    } catch (error) {
      this.#broken = error;
    } finally {
      this.#body.abort(this.#broken);
      this.#notify();
    }
  }

  #notify(): void {
    for (const wake of this.#wake.splice(0)) wake();
  }

  async #until(condition: () => boolean): Promise<void> {
    while (!condition() && this.#broken === undefined && !this.#completed) {
      await new Promise<void>((resolve) => this.#wake.push(resolve));
    }
    if (this.#broken !== undefined) throw this.#broken;
  }

  async append(text: string): Promise<void> {
    if (this.#broken !== undefined) throw this.#broken;
    const line = {
      type: 'message.patch',
      patch: { op: 'appendText', blockId: this.#target.blockId, path: '/text', value: text },
    };
    if (!this.#body.line(line))
      throw new ConnectionError('The streamed request closed before the reply was complete.');
    this.#sent += text.length;
    await this.#until(() => this.#sent - this.#acknowledged < this.#window);
  }

  async complete(fallbackText: string): Promise<Completion> {
    if (this.#broken !== undefined) throw this.#broken;
    if (!this.#body.line({ type: 'message.completed', fallbackText })) {
      throw new ConnectionError('The streamed request closed before the reply was complete.');
    }
    this.#body.end();
    await this.#reading;
    if (!this.#completed) {
      throw this.#broken ?? new ConnectionError('The event stream ended before message.completed.');
    }
    return { status: 'sent', revision: this.#patches };
  }

  close(reason?: unknown): void {
    this.#body.abort(reason);
    this.#events.return?.().catch(() => {});
  }
}

/**
 * The append and complete endpoints, called through the client's resources, one request per change.
 * Never retried blindly (appends are not idempotent): a failure is read back by the writer.
 * @internal
 */
export class AppendSink implements ReplySink {
  readonly kind = 'append';
  readonly #api: ReplyApi;
  readonly #target: SinkTarget;
  readonly #request: RequestOptions;

  constructor(api: ReplyApi, target: SinkTarget, request: RequestOptions) {
    this.#api = api;
    this.#target = target;
    const { signal, timeoutMs, headers } = request;
    this.#request = { signal, timeoutMs, headers, maxRetries: 0 };
  }

  async append(text: string): Promise<void> {
    const { messageId, blockId } = this.#target;
    await this.#api.messages.append(messageId, blockId, { path: '/text', value: text }, this.#request);
  }

  async complete(fallbackText: string): Promise<Completion> {
    const body = { status: 'sent' as const, fallbackText };
    const { status, revision } = await this.#api.messages.complete(
      this.#target.messageId,
      body,
      this.#request,
    );
    return { status, revision };
  }

  close(): void {}
}

/** What the service holds of a reply. @internal */
export interface AppliedState {
  /** The text of the reply's block. */
  text: string;
  status: Message['status'];
  revision: number | undefined;
}

// A reply is among the newest messages; a conversation this busy while it streams is not expected.
const READ_BACK_LIMIT = 1_000;

/**
 * Finds the reply in history (newest first) and answers the text of its part `blockIndex`, its
 * status and its revision: exactly what the service applied. A read, so the transport retries it.
 * @internal
 */
export async function readBack(
  api: ReplyApi,
  conversationId: string,
  target: { messageId: string; blockIndex: number },
  request: RequestOptions,
): Promise<AppliedState> {
  const { signal, timeoutMs, headers } = request;
  let seen = 0;
  for await (const message of api.conversations.history(conversationId, {}, { signal, timeoutMs, headers })) {
    if (message.id === target.messageId) {
      const part = message.parts?.find((candidate) => candidate.part_index === target.blockIndex);
      return { text: part?.text ?? '', status: message.status, revision: message.revision };
    }
    if (++seen >= READ_BACK_LIMIT) break;
  }
  throw new AgentMessagingError(
    `message ${target.messageId} is not among the conversation's newest ${READ_BACK_LIMIT} messages, so the reply cannot be resumed.`,
  );
}
