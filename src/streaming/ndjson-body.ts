// The request body of a Streamable HTTP reply: JSON lines pushed while the request is in flight, and
// whether this runtime can send such a body at all.

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

  /** True until the body ended, failed, or the connection cancelled it. */
  get open(): boolean {
    return this.#open;
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
    if (!this.#open) return;
    this.#open = false;
    try {
      this.#controller.close();
    } catch {
      // Already closed by the other side.
    }
  }

  /** Fails the body, which aborts the upload half of the request. */
  abort(reason: unknown): void {
    if (!this.#open) return;
    this.#open = false;
    try {
      this.#controller.error(reason);
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
  if (detected !== undefined) return detected;
  // Bun and Deno send a ReadableStream body while the answer streams back, but never read `duplex`,
  // so the feature test below would miss them.
  const runtime = globalThis as { Bun?: unknown; Deno?: unknown };
  if (runtime.Bun !== undefined || runtime.Deno !== undefined) {
    detected = true;
    return detected;
  }
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
    const hasContentType = new Request('http://feature.test/', init as RequestInit).headers.has(
      'content-type',
    );
    detected = duplexRead && !hasContentType;
  } catch {
    detected = false;
  }
  return detected;
}
