// The streaming send (PROTOCOL.md section 8): a message in `streaming` state whose answer is its
// live event log, fed by the NDJSON lines of the same request or by append/complete calls. Each open
// stream follows its message with its own seq; events go out as soon as a change applies.
// One `text/event-stream` writer serves it and the live feed: frames go out as soon as they are
// written, a `: keep-alive` comment after every `keepAliveMs` without one, and the stream ends
// cleanly, breaks like a cut connection, or stops when its client goes away.

import { EVENT_SCHEMA } from '../schemas/common.js';
import { StreamBodyLine } from '../schemas/stream.js';
import { checkJson, decodeJson, type LineReader } from './body.js';
import { MockError } from './http.js';
import { newId } from './ids.js';
import { appendText, completeMessage } from './messages.js';
import type { RouteContext } from './router.js';
import type { MessageRecord, MockWorld } from './state.js';

/** A `text/event-stream` answer of `body` (a streaming message's events, the live feed). */
export function eventStreamResponse(body: ReadableStream<Uint8Array>): Response {
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      // Chunked framing makes a cut stream a broken body for the client, not a clean end of a
      // connection-delimited one (msw's interceptor and node:http both honour it).
      'transfer-encoding': 'chunked',
    },
  });
}

/** An event stream of the message from now on; the request's NDJSON lines, if any, feed it. */
export function followMessage(ctx: RouteContext, message: MessageRecord): Response {
  const { world, lines } = ctx;
  let stopped = false;
  const writer = world.streams.open(message, {
    cutAfterEvents: ctx.fault?.fault === 'cut_stream' ? ctx.fault.after_events : undefined,
    keepAliveMs: world.options.keepAliveMs,
    signal: ctx.request.signal,
    // Cut or disconnected: lines not yet applied are never applied, and the message stays as it is.
    onStop: () => {
      stopped = true;
      lines?.cancel();
    },
  });
  if (lines) void applyLines(world, message, lines, () => stopped, writer);
  return eventStreamResponse(writer.body);
}

async function applyLines(
  world: MockWorld,
  message: MessageRecord,
  lines: LineReader,
  stopped: () => boolean,
  writer: SseWriter,
): Promise<void> {
  const generation = world.state.generation;
  try {
    for (;;) {
      const line = await lines.next();
      if (line === undefined || stopped() || world.state.generation !== generation) return;
      // Once the message is complete, the rest of the body is read and ignored.
      if (line.trim() === '' || message.status !== 'streaming') continue;
      const parsed = checkJson(StreamBodyLine, decodeJson(line, 'line'), 'line');
      if (parsed.type === 'message.patch')
        appendText(world, message, parsed.patch.blockId, parsed.patch.value);
      else completeMessage(world, message, parsed.fallbackText);
    }
  } catch (error) {
    // A bad line breaks the connection, so the writer notices and recovers through append;
    // a body that fails to read means the client went away, which leaves the message as it is.
    if (error instanceof MockError) writer.cut();
  }
}

/** How a writer is set up; a stream of a message may also be cut after N events (a fault). */
interface StreamOptions {
  cutAfterEvents?: number | undefined;
  keepAliveMs: number;
  /** The request's signal: when the client aborts, the stream stops (nothing else changes). */
  signal?: AbortSignal | undefined;
  /** Called once when the stream stops for any reason but `close()`: a cut, a cancel, an abort. */
  onStop?: () => void;
}

/** Every open stream of a message, by message id; each counts its own seq. */
export class StreamHub {
  readonly #open = new Map<string, Set<SseWriter>>();

  /** How many streams follow a message now; a stream leaves when it completes, is cut, or its client goes away. */
  get openCount(): number {
    let count = 0;
    for (const set of this.#open.values()) count += set.size;
    return count;
  }

  /** A stream that starts with `message.started` (text so far) and then follows live. */
  open(message: MessageRecord, options: StreamOptions): SseWriter {
    const writers = this.#open.get(message.id) ?? new Set<SseWriter>();
    const writer = new SseWriter({
      ...options,
      onStop: () => {
        writers.delete(writer);
        options.onStop?.();
      },
    });
    if (options.cutAfterEvents === 0) writer.cut();
    else {
      this.#open.set(message.id, writers.add(writer));
      send(writer, message, 'message.started', { message: { id: message.id, content: message.blocks } });
      if (message.status !== 'streaming') this.completed(message);
    }
    return writer;
  }

  /** Tells every open stream of the message about an applied append. */
  patched(message: MessageRecord, blockId: string, value: string): void {
    const patch = { op: 'appendText', blockId, path: '/text', value };
    for (const writer of [...(this.#open.get(message.id) ?? [])]) {
      send(writer, message, 'message.patch', { messageId: message.id, patch });
    }
  }

  /** Tells every open stream of the message that it completed; the streams end. */
  completed(message: MessageRecord): void {
    for (const writer of this.#open.get(message.id) ?? []) {
      // `revision` is an extension field (the SDK must not require it): a reader of a replayed
      // stream, which starts from the text so far, learns the final revision without counting.
      send(writer, message, 'message.completed', { messageId: message.id, revision: message.revision });
    }
    this.closeAll(message.id);
  }

  /** Ends every open stream (reset, completion or unsend of a streaming message). */
  closeAll(messageId?: string): void {
    const sets = messageId ? [this.#open.get(messageId)] : [...this.#open.values()];
    if (messageId) this.#open.delete(messageId);
    else this.#open.clear();
    for (const set of sets) for (const writer of set ?? []) writer.close();
  }
}

/** One event of a message's stream, numbered by the stream's own seq. */
function send(
  writer: SseWriter,
  message: MessageRecord,
  type: string,
  fields: Record<string, unknown>,
): void {
  writer.event(type, {
    schema: EVENT_SCHEMA,
    eventId: newId('evt'),
    conversationId: message.conversation_id,
    type,
    seq: writer.events + 1,
    ...fields,
  });
}

const encoder = new TextEncoder();

/** Writes one event stream; `body` is the answer's body. */
export class SseWriter {
  readonly body: ReadableStream<Uint8Array>;
  readonly #options: StreamOptions;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #keepAlive: ReturnType<typeof setTimeout> | undefined;
  #done = false;
  #cutPending = false;
  #events = 0;

  constructor(options: StreamOptions) {
    this.#options = options;
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      // A cut waits until the reader has taken the frames already written (error() drops queued ones).
      pull: () => {
        if (this.#cutPending) this.#controller.error(new Error('stream cut'));
      },
      // The client went away: only this stream stops.
      cancel: () => this.#stop(),
    });
    this.#armKeepAlive();
    const { signal } = options;
    signal?.addEventListener(
      'abort',
      () => {
        if (this.#done) return;
        this.#stop();
        this.#controller.error(signal.reason);
      },
      { once: true },
    );
  }

  /** How many events were written. */
  get events(): number {
    return this.#events;
  }

  /**
   * One frame: `event:` and `data:` lines (and `id:` when given), written at once; the stream is cut
   * right after it when it is the event a cut_stream fault names.
   */
  event(type: string, data: unknown, id?: number): void {
    if (this.#done) return;
    this.#events += 1;
    const head = id === undefined ? '' : `id: ${id}\n`;
    this.write(`${head}event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
    if (this.#events === this.#options.cutAfterEvents) this.cut();
  }

  /** Raw text (a frame or a comment); ignored once the stream is done. */
  write(text: string): void {
    if (this.#done) return;
    this.#controller.enqueue(encoder.encode(text));
    this.#armKeepAlive();
  }

  /** Ends the stream cleanly. */
  close(): void {
    if (this.#done) return;
    this.#finish();
    this.#controller.close();
  }

  /** Breaks the stream as a cut connection would, once the frames already written are read. */
  cut(): void {
    if (this.#done) return;
    this.#stop();
    if ((this.#controller.desiredSize ?? 0) > 0) this.#controller.error(new Error('stream cut'));
    else this.#cutPending = true;
  }

  #stop(): void {
    if (this.#done) return;
    this.#finish();
    this.#options.onStop?.();
  }

  #finish(): void {
    this.#done = true;
    clearTimeout(this.#keepAlive);
  }

  #armKeepAlive(): void {
    if (this.#done) return;
    clearTimeout(this.#keepAlive);
    this.#keepAlive = setTimeout(() => this.write(': keep-alive\n\n'), this.#options.keepAliveMs);
    this.#keepAlive.unref?.();
  }
}
