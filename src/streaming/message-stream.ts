// MessageStream: the events of a streamed message, read once. The class is all the main entry holds
// of the reader: its machinery (message-stream-reading.ts) loads with the first read, unless
// `messages.stream()` loaded it already (open-message-stream.ts hands it over), so a bundler that
// splits by module (esbuild) keeps the SSE parser out of `import { AgentClient }`'s first chunk.

import { AgentMessagingError, ConnectionError } from '../core/errors.js';
import type { StreamEvent } from '../schemas/stream.js';
import type { MessageStreamReading } from './message-stream-reading.js';
import type { SseReadOptions } from './sse-reader.js';
import type { StreamedMessage, StreamedMessageBuilder } from './streamed-message.js';

type Reading = typeof import('./message-stream-reading.js');

// The reader once loaded: a stream read after that starts at once, with no extra step per event.
let reading: Reading | undefined;

/** Hands the loaded reader over, so streams made from here on start reading without a load. @internal */
export function useMessageStreamReading(loaded: Reading): void {
  reading ??= loaded;
}

// The reader comes with the module `messages.stream()` loads (no chunk of its own for a bundler to
// split apart). A failed load is a ConnectionError and is not kept: the next read loads again. Not
// load-on-use.ts: this module would then share it with the client, which splits rolldown's chunks.
const loadReading = async (): Promise<Reading> => {
  const loaded = await import('./open-message-stream.js').catch((cause: unknown) => {
    const message = `MessageStream: the SDK's stream reader could not be loaded (${String(cause)}).`;
    throw new ConnectionError(message, { cause });
  });
  reading ??= loaded.reading;
  return reading;
};

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
    if (reading !== undefined) return this.#read(reading);
    // A stream made by hand before any was read: the first `next()` waits for the reader.
    const started = loadReading().then(
      (loaded) => this.#read(loaded),
      (error: unknown) => {
        this.#state = 'done';
        this.#body.cancel().catch(() => {});
        throw error;
      },
    );
    let events: AsyncIterator<StreamEvent> | undefined;
    started.then(
      (ready) => {
        events = ready;
      },
      () => {},
    );
    const ended = { done: true, value: undefined } as const;
    return {
      next: () => (events !== undefined ? events.next() : started.then((ready) => ready.next())),
      return: () =>
        started.then(
          (ready) => ready.return?.() ?? ended,
          () => ended,
        ),
    };
  }

  #read(loaded: Reading): AsyncIterator<StreamEvent> {
    const { events, builder }: MessageStreamReading = loaded.readMessageStream(
      this.#body,
      this.#options,
      (unread) => {
        this.#state = 'done';
        // A `return()` before the first read: the reader never took the body, so close it here.
        if (unread) this.#body.cancel().catch(() => {});
      },
    );
    this.#builder = builder;
    return events;
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
    return (await loadReading()).textOfBlocks(message.blocks);
  }

  /** Closes the connection without reading further; a no-op once the stream is being read. */
  async cancel(reason?: unknown): Promise<void> {
    if (this.#state !== 'unread') return;
    this.#state = 'done';
    await this.#body.cancel(reason).catch(() => {});
  }
}
