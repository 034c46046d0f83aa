// One `text/event-stream` answer being written, for both of the mock's event streams (a streaming
// message's events in stream-hub.ts, the live feed in event-stream.ts): frames go out as soon as they
// are written, a `: keep-alive` comment after every `keepAliveMs` without one, and the stream ends
// cleanly, breaks like a cut connection, or stops when its client goes away.

const encoder = new TextEncoder();

/** How a writer is set up. */
export interface SseWriterOptions {
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
