// Test helpers for streaming: a reader of the event stream (with eventsource-parser, as a client
// would read it), a writer of an NDJSON request body, and a mock behind the loopback server.
import type { StreamEvent } from 'agent-messaging';
import { createMockService, type MockServer, type MockServiceOptions } from 'agent-messaging/testing';
import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, beforeEach } from 'vitest';
// Private: the SDK's check of a stream event (the union of the event schemas).
import { parseStreamEvent } from '../../src/schemas/stream.js';
import { type Call, client, WebhookReceiver } from './helpers.js';

/** Reads a `text/event-stream` body into parsed events, as they arrive. */
export class EventReader {
  readonly events: StreamEvent[] = [];
  readonly comments: string[] = [];
  /** Resolves with 'end' when the body ends cleanly, or with the error that broke it. */
  readonly done: Promise<'end' | Error>;
  #waiters: (() => void)[] = [];
  #finished: 'end' | Error | undefined;

  constructor(response: Response) {
    const parser = createParser({
      onEvent: (message) => {
        const parsed = parseStreamEvent(JSON.parse(message.data));
        if (!parsed.success) throw parsed.error;
        if (message.event !== parsed.data.type)
          throw new Error(`event line ${message.event} != type ${parsed.data.type}`);
        this.events.push(parsed.data);
        this.#wake();
      },
      onComment: (comment) => {
        this.comments.push(comment);
        this.#wake();
      },
    });
    const reader = response.body?.getReader();
    const decoder = new TextDecoder();
    this.done = (async () => {
      try {
        for (;;) {
          const chunk = await reader?.read();
          if (!chunk || chunk.done) return 'end' as const;
          parser.feed(decoder.decode(chunk.value, { stream: true }));
        }
      } catch (error) {
        return error instanceof Error ? error : new Error(String(error));
      }
    })().then((result) => {
      this.#finished = result;
      this.#wake();
      return result;
    });
    this.cancel = () => void reader?.cancel().catch(() => undefined);
  }

  /** Stops reading (a client that goes away). */
  readonly cancel: () => void;

  /** Waits until `count` events arrived; fails if the stream ends first. */
  async waitFor(count: number): Promise<StreamEvent[]> {
    while (this.events.length < count) {
      if (this.#finished !== undefined) {
        throw new Error(
          `stream ended (${String(this.#finished)}) after ${this.events.length} of ${count} events`,
        );
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    return this.events.slice(0, count);
  }

  /** Waits until at least one comment arrived. */
  async waitForComment(): Promise<string> {
    while (this.comments.length === 0) {
      if (this.#finished !== undefined) throw new Error('stream ended before a comment');
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    return this.comments[0] ?? '';
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

/** An NDJSON request body written line by line while the request is open. */
export class NdjsonWriter {
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  readonly #encoder = new TextEncoder();

  constructor() {
    this.body = new ReadableStream({
      start: (controller) => {
        this.#controller = controller;
      },
    });
  }

  /** Sends one JSON line. */
  line(value: unknown): void {
    this.#controller.enqueue(this.#encoder.encode(`${JSON.stringify(value)}\n`));
  }

  /** Sends raw text. */
  raw(text: string): void {
    this.#controller.enqueue(this.#encoder.encode(text));
  }

  /** Ends the body. */
  close(): void {
    try {
      this.#controller.close();
    } catch {
      // Already cancelled by the connection going away.
    }
  }
}

/** The streaming send over fetch with an NDJSON body whose first line is `first`. */
export async function streamingSend(
  baseUrl: string,
  conversationId: string,
  apiKey: string,
  key: string,
  first: unknown,
  signal?: AbortSignal,
): Promise<{ response: Response; writer: NdjsonWriter }> {
  const writer = new NdjsonWriter();
  writer.line(first);
  const response = await fetch(`${baseUrl}/v1/conversations/${conversationId}/messages?stream=true`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'idempotency-key': key,
      'content-type': 'application/x-ndjson',
    },
    body: writer.body,
    duplex: 'half',
    signal,
  } as RequestInit);
  return { response, writer };
}

/** The streaming send with a plain JSON body (the fallback input). */
export function jsonStreamingSend(
  baseUrl: string,
  conversationId: string,
  apiKey: string,
  key: string,
  body: unknown,
) {
  return fetch(`${baseUrl}/v1/conversations/${conversationId}/messages?stream=true`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'idempotency-key': key,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  });
}

/** One mock per test file on a real port, reset before every test. */
export function useMockOverLoopback(options: MockServiceOptions = {}) {
  const receiver = new WebhookReceiver();
  const mock = createMockService({ fetch: receiver.fetch, ...options });
  let server: MockServer | undefined;
  const context = {
    mock,
    receiver,
    get baseUrl(): string {
      if (!server) throw new Error('the server is not listening yet');
      return server.baseUrl;
    },
    call: ((...args) => client(context.baseUrl)(...args)) as Call,
  };
  beforeAll(async () => {
    server = await mock.listen({ port: 0 });
  });
  beforeEach(async () => {
    await mock.idle();
    mock.reset();
    receiver.received.length = 0;
    receiver.status = 204;
  });
  afterAll(async () => {
    await server?.close();
  });
  return context;
}
