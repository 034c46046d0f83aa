// The request body of a Streamable HTTP reply: JSON lines pushed while the request is in flight,
// and whether this runtime's fetch can send such a body at all (detected once).

const encoder = new TextEncoder();

/**
 * A `ReadableStream` of NDJSON lines that the writer pushes into as text is written. Once the
 * connection is gone (the fetch cancelled the body) pushes are refused, so the caller knows the
 * line was not sent.
 * @internal
 */
export class NdjsonBody {
  /** The body to hand to fetch (with `duplex: 'half'`). */
  readonly stream: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #open = true;

  constructor() {
    this.stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      cancel: () => {
        this.#open = false;
      },
    });
  }

  /** Pushes one JSON line; false when the body no longer takes lines. */
  line(value: unknown): boolean {
    if (!this.#open) return false;
    try {
      this.#controller.enqueue(encoder.encode(`${JSON.stringify(value)}\n`));
      return true;
    } catch {
      this.#open = false;
      return false;
    }
  }

  /** Ends the body: the service has every line. */
  end(): void {
    this.#close(() => this.#controller.close());
  }

  /** Fails the body, which aborts the upload half of the request. */
  abort(reason: unknown): void {
    this.#close(() => this.#controller.error(reason));
  }

  #close(close: () => void): void {
    if (!this.#open) return;
    this.#open = false;
    try {
      close();
    } catch {
      // Already closed by the other side.
    }
  }
}

let detected: boolean | undefined;

/**
 * True when `fetch` here can upload a `ReadableStream` body while the answer streams back. A runtime
 * without it ignores `duplex` and turns the stream into a string body with a content-type, which is
 * what the check looks for (the feature test Chrome's authors recommend).
 */
export function supportsStreamedBodies(): boolean {
  detected ??= detect();
  return detected;
}

function detect(): boolean {
  // Bun and Deno send a ReadableStream body while the answer streams back, but never read `duplex`,
  // so the feature test below would miss them.
  const runtime = globalThis as { Bun?: unknown; Deno?: unknown };
  if (runtime.Bun !== undefined || runtime.Deno !== undefined) return true;
  try {
    let duplexRead = false;
    const init = {
      method: 'POST',
      body: new ReadableStream(),
      get duplex() {
        duplexRead = true;
        return 'half';
      },
    };
    const request = new Request('http://feature.test/', init as RequestInit);
    return duplexRead && !request.headers.has('content-type');
  } catch {
    return false;
  }
}
