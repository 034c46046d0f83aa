// The answer of a streaming send (`messages.stream()`, a reply's start) read once as a MessageStream:
// the SSE reader's batches handed out by the event iterator, each applied to the builder of the
// message as it goes.

import { AgentMessagingError, ConnectionError, InvalidResponseError } from '../core/errors.js';
import type { StreamEvent } from '../schemas/stream.js';
import { EventIterator } from './event-iterator.js';
import { readStreamEventBatches, type SseReadOptions } from './sse-reader.js';
import { type StreamedMessage, StreamedMessageBuilder, textOfBlocks } from './streamed-message.js';

/** Options of a {@link MessageStream}. */
export interface MessageStreamOptions extends SseReadOptions {
  /** The `Request-Id` of the response the stream came from, kept for errors and support. */
  requestId?: string | undefined;
}

/**
 * The events of a streamed message as the service applies them: `message.started`, then
 * `message.patch` events, then `message.completed` (events of unknown types pass through).
 * It can be read once. Leaving a `for await` loop early, or aborting the signal, closes the
 * connection; the message itself stays `streaming` on the service until it is completed.
 *
 * @example
 * const stream = await client.messages.stream(cnv, { replyToMessageId });
 * for await (const event of stream) {
 *   if (event.type === 'message.patch') process.stdout.write(event.patch.value);
 * }
 */
export class MessageStream implements AsyncIterable<StreamEvent> {
  /** The `Request-Id` of the streaming response, when the service sent one. */
  readonly requestId: string | undefined;
  readonly #body: ReadableStream<Uint8Array>;
  readonly #options: SseReadOptions;
  /** Made when reading starts; `message` is undefined until `message.started` anyway. */
  #builder: StreamedMessageBuilder | undefined;
  #state: 'unread' | 'reading' | 'done' = 'unread';

  /** Wraps a `text/event-stream` body; usually made by `client.messages.stream()`. */
  constructor(body: ReadableStream<Uint8Array>, options: MessageStreamOptions = {}) {
    this.#body = body;
    this.requestId = options.requestId;
    this.#options = { idleTimeoutMs: options.idleTimeoutMs, signal: options.signal };
  }

  /** The message as built from the events read so far (undefined before `message.started`). */
  get message(): StreamedMessage | undefined {
    return this.#builder?.snapshot();
  }

  /** Starts reading; a stream can be iterated once only. */
  [Symbol.asyncIterator](): AsyncIterator<StreamEvent> {
    if (this.#state !== 'unread') {
      throw new AgentMessagingError(
        'This MessageStream was already read: a stream can be iterated once. Keep the events you need, or use finalMessage().',
      );
    }
    this.#state = 'reading';
    this.#builder = new StreamedMessageBuilder();
    const batches = readStreamEventBatches(this.#body, this.#options);
    return new EventIterator(batches, this.#builder, (unread) => {
      this.#state = 'done';
      // A `return()` before the first read: the reader never took the body, so close it here.
      if (unread) this.#body.cancel().catch(() => {});
    });
  }

  /**
   * Reads the stream to its end (what is left of it) and returns the message built from its
   * events: ids, blocks with their applied text, and whether it completed. After an early `break`
   * it returns what was read before the loop was left.
   */
  async finalMessage(): Promise<StreamedMessage> {
    if (this.#state === 'reading') {
      throw new AgentMessagingError('finalMessage() cannot run while a loop is still reading this stream.');
    }
    if (this.#state === 'unread') for await (const _ of this);
    const message = this.#builder?.snapshot();
    if (message === undefined) {
      throw new ConnectionError('The event stream closed before message.started.');
    }
    return message;
  }

  /** Reads the stream to its end and returns the text of its text blocks, joined. */
  async finalText(): Promise<string> {
    const message = await this.finalMessage();
    return textOfBlocks(message.blocks);
  }

  /** Closes the connection without reading further; a no-op once the stream is being read. */
  async cancel(reason?: unknown): Promise<void> {
    if (this.#state !== 'unread') return;
    this.#state = 'done';
    await this.#body.cancel(reason).catch(() => {});
  }
}

/** The MessageStream of a 2xx answer, or an InvalidResponseError when it is not an event stream. @internal */
export function messageStreamOf(
  response: Response,
  operation: string,
  options: { idleTimeoutMs?: number | undefined; signal?: AbortSignal | undefined },
): MessageStream {
  const requestId = response.headers.get('request-id') ?? undefined;
  if (!isEventStream(response) || response.body === null) {
    response.body?.cancel().catch(() => {});
    throw new InvalidResponseError(
      `${operation}: expected a text/event-stream answer, got ${response.headers.get('content-type') ?? 'no content-type'}.`,
      { status: response.status, requestId },
    );
  }
  return new MessageStream(response.body, { ...options, requestId });
}

/** True when the answer is an SSE stream. @internal */
export function isEventStream(response: Response): boolean {
  return /^text\/event-stream\b/i.test(response.headers.get('content-type') ?? '');
}
