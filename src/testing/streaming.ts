// The streaming send (PROTOCOL.md section 8): a message in `streaming` state whose answer is its
// live event log, fed by the NDJSON lines of the same request or by append/complete calls. Each open
// stream is a subscriber of its message with its own seq; events go out as soon as a change applies.
// One `text/event-stream` writer serves it and the live feed: frames go out as soon as they are
// written, a `: keep-alive` comment after every `keepAliveMs` without one, and the stream ends
// cleanly, breaks like a cut connection, or stops when its client goes away.

import { EVENT_SCHEMA } from '../schemas/common.js';
import { StreamBodyLine } from '../schemas/stream.js';
import { type LineReader, parseJson } from './body.js';
import { MockError } from './http.js';
import { newId } from './ids.js';
import { appendText, completeMessage, createMessage, sendBlock } from './messages.js';
import type { RouteContext } from './router.js';
import type { BlockRecord, ConversationRecord, MessageRecord, MockWorld } from './state.js';

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

interface SendFields {
  fallbackText?: string;
  replyToMessageId?: string;
  metadata?: Record<string, unknown>;
}

/** Creates the streaming message and answers its event stream; replays follow the same message. */
export function startStreamingSend(
  ctx: RouteContext<SendFields>,
  conversation: ConversationRecord,
  blocks: BlockRecord[],
): Response {
  const { world } = ctx;
  // A reply always has a text block to append to.
  if (!blocks.some((block) => block.type === 'text'))
    blocks.push({ id: newId('blk'), type: 'text', text: '' });
  const message = createMessage(world, conversation, {
    sender_id: ctx.caller?.id ?? '',
    blocks,
    fallback_text: ctx.body.fallbackText || null,
    status: 'streaming',
    reply_to: ctx.body.replyToMessageId,
    metadata: ctx.body.metadata,
  });
  ctx.replayWith = (replay) => followMessage(replay, message);
  return followMessage(ctx, message);
}

/** An event stream of the message from now on; the request's NDJSON lines, if any, feed it. */
function followMessage(ctx: RouteContext, message: MessageRecord): Response {
  const { world, lines } = ctx;
  const control = { stopped: false };
  const stream = world.streams.open(message, {
    cutAfterEvents: ctx.fault?.fault === 'cut_stream' ? ctx.fault.after_events : undefined,
    keepAliveMs: world.options.keepAliveMs,
    signal: ctx.request.signal,
    // Cut or disconnected: lines not yet applied are never applied, and the message stays as it is.
    onStop: () => {
      control.stopped = true;
      lines?.cancel();
    },
  });
  if (lines) void applyLines(world, message, lines, control, stream.cut);
  return eventStreamResponse(stream.body);
}

async function applyLines(
  world: MockWorld,
  message: MessageRecord,
  lines: LineReader,
  control: { stopped: boolean },
  cut: () => void,
): Promise<void> {
  const generation = world.state.generation;
  try {
    for (;;) {
      const line = await lines.next();
      if (line === undefined || control.stopped || world.state.generation !== generation) return;
      // Once the message is complete, the rest of the body is read and ignored.
      if (line.trim() === '' || message.status !== 'streaming') continue;
      const parsed = parseJson(StreamBodyLine, line, 'line');
      if (parsed.type === 'message.patch')
        appendText(world, message, parsed.patch.blockId, parsed.patch.value);
      else completeMessage(world, message, parsed.fallbackText);
    }
  } catch (error) {
    // A bad line breaks the connection, so the writer notices and recovers through append;
    // a body that fails to read means the client went away, which leaves the message as it is.
    if (error instanceof MockError) cut();
  }
}

/** How one stream ends early: cut after N events (a fault) and what to stop when it does. */
export interface StreamOptions {
  cutAfterEvents?: number;
  keepAliveMs: number;
  /** The request's signal: when the client aborts, the stream stops following (nothing else changes). */
  signal?: AbortSignal | undefined;
  /** Called once when the stream stops following the message for any reason but completion. */
  onStop?: () => void;
}

interface Subscriber {
  patch(blockId: string, value: string): void;
  complete(): void;
  close(): void;
}

/** Every open stream, by message id. */
export class StreamHub {
  readonly #subscribers = new Map<string, Set<Subscriber>>();

  /** How many streams follow a message now; a stream leaves when it completes, is cut, or its client goes away. */
  get openCount(): number {
    let count = 0;
    for (const set of this.#subscribers.values()) count += set.size;
    return count;
  }

  /**
   * Opens a stream that starts with `message.started` (text so far) and then follows live.
   * `cut()` breaks it as a fault would (the connection is destroyed).
   */
  open(
    message: MessageRecord,
    options: StreamOptions,
  ): { body: ReadableStream<Uint8Array>; cut: () => void } {
    let seq = 0;
    // Assigned first thing in the writer's start, which runs inside its constructor.
    let writer!: SseWriter;
    const subscribers = () => this.#subscribers.get(message.id);
    const leave = () => subscribers()?.delete(subscriber);
    const write = (type: string, fields: Record<string, unknown>) => {
      if (writer.done) return;
      seq += 1;
      writer.event(type, {
        schema: EVENT_SCHEMA,
        eventId: newId('evt'),
        conversationId: message.conversation_id,
        type,
        seq,
        ...fields,
      });
      // "Destroyed right after that many events": cut at once, not at the next event.
      if (options.cutAfterEvents !== undefined && seq >= options.cutAfterEvents) writer.cut();
    };
    const subscriber: Subscriber = {
      patch: (blockId, value) =>
        write('message.patch', {
          messageId: message.id,
          patch: { op: 'appendText', blockId, path: '/text', value },
        }),
      complete: () => {
        // `revision` is an extension field (the SDK must not require it): a reader of a replayed
        // stream, which starts from the text so far, learns the final revision without counting.
        write('message.completed', { messageId: message.id, revision: message.revision });
        leave();
        writer.close();
      },
      close: () => {
        leave();
        writer.close();
      },
    };
    new SseWriter(
      {
        keepAliveMs: options.keepAliveMs,
        signal: options.signal,
        onStop: () => {
          leave();
          options.onStop?.();
        },
      },
      (started) => {
        writer = started;
        if (options.cutAfterEvents === 0) return writer.cut();
        const set = subscribers() ?? new Set<Subscriber>();
        this.#subscribers.set(message.id, set);
        set.add(subscriber);
        write('message.started', { message: { id: message.id, content: message.blocks.map(sendBlock) } });
        if (message.status !== 'streaming') subscriber.complete();
      },
    );
    return { body: writer.body, cut: () => writer.cut() };
  }

  /** Tells every open stream of the message about an applied append. */
  patched(messageId: string, blockId: string, value: string): void {
    for (const subscriber of [...(this.#subscribers.get(messageId) ?? [])]) subscriber.patch(blockId, value);
  }

  /** Tells every open stream of the message that it completed; the streams end. */
  completed(messageId: string): void {
    for (const subscriber of [...(this.#subscribers.get(messageId) ?? [])]) subscriber.complete();
    this.#subscribers.delete(messageId);
  }

  /** Ends every open stream (reset, unsend of a streaming message). */
  closeAll(messageId?: string): void {
    const sets = messageId ? [this.#subscribers.get(messageId)] : [...this.#subscribers.values()];
    for (const set of sets) for (const subscriber of [...(set ?? [])]) subscriber.close();
    if (messageId) this.#subscribers.delete(messageId);
    else this.#subscribers.clear();
  }
}

const encoder = new TextEncoder();

/** How a writer is set up. */
interface SseWriterOptions {
  keepAliveMs: number;
  /** The request's signal: when the client aborts, the stream stops (and `onStop` is called). */
  signal?: AbortSignal | undefined;
  /** Called once when the stream stops for any reason but `close()`: a cut, a cancel, an abort. */
  onStop?: () => void;
}

/** Writes one event stream; `body` is the answer's body. */
export class SseWriter {
  readonly body: ReadableStream<Uint8Array>;
  readonly #options: SseWriterOptions;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #keepAlive: ReturnType<typeof setTimeout> | undefined;
  #done = false;
  #cutPending = false;

  /** `start` runs once the stream exists: the first frames are written from there. */
  constructor(options: SseWriterOptions, start: (writer: SseWriter) => void) {
    this.#options = options;
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
        start(this);
        this.#armKeepAlive();
      },
      // A cut waits until the reader has taken the frames already written (error() drops queued ones).
      pull: () => {
        if (this.#cutPending) this.#controller.error(new Error('stream cut'));
      },
      // The client went away: only this stream stops.
      cancel: () => this.#stop(),
    });
    options.signal?.addEventListener(
      'abort',
      () => {
        if (this.#done) return;
        this.#stop();
        this.#controller.error(options.signal?.reason);
      },
      { once: true },
    );
  }

  /** True once the stream ended, was cut, or its client went away. */
  get done(): boolean {
    return this.#done;
  }

  /** One frame: `event:` and `data:` lines (and `id:` when given), written at once. */
  event(type: string, data: unknown, id?: number): void {
    const head = id === undefined ? '' : `id: ${id}\n`;
    this.write(`${head}event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
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
