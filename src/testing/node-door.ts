// The node:http door: a real server on 127.0.0.1 over the shared node:http <-> Fetch bridge
// (../node-bridge.ts). A JSON body is read whole before the mock sees it; an NDJSON body streams in,
// so it is applied line by line while the event stream flows the other way. A call to /v1 or a file
// URL with a body read whole (almost every call) goes to the pipeline as the request node:http
// parsed, and a JSON answer goes back as its text: no Fetch `Request` or `Response` in between.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import {
  isFetchMethod,
  type ReadBody,
  readBody,
  restOfBody,
  toRequest,
  UnbridgeableRequest,
  writeError,
  writeResponse,
  writeText,
} from '../node-bridge.js';
import { type Answer, JsonAnswer, MAX_BODY_BYTES } from './http.js';
import { type Incoming, RawHeaders } from './incoming.js';
import type { MockServer } from './types.js';

/** What the door hands requests to. */
export interface DoorHandlers {
  /** Any request, as a Fetch `Request` (the emulator page and /_mock go through here). */
  fetch: (request: Request) => Promise<Response>;
  /** /v1 and the file URLs with a body read whole, as the pipeline reads them. */
  serve: (incoming: Incoming) => Promise<Answer>;
}

// Read into memory before the mock sees the request: the service's limit and one byte more, enough
// for the mock to tell a body over the limit (413). A larger body (a file upload) streams on.
const BUFFERED_BYTES = MAX_BODY_BYTES + 1;
const NDJSON = /^\s*application\/x-ndjson\b/i;

/** Listens on 127.0.0.1:`port` (0 picks a free port) and answers every request with `handlers`. */
export async function serveOnLoopback(handlers: DoorHandlers, port: number): Promise<MockServer> {
  let origin = '';
  const server = createServer((req, res) => {
    const socket = req.socket;
    // Nothing the bridge meets may crash the process; a broken exchange just closes its connection.
    bridge(handlers, req, res, origin).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Open event streams never end on their own: end every connection now.
        server.closeAllConnections();
      }),
  };
}

/** The request's body for the mock: bytes when read whole, a stream for NDJSON or past the limit. */
async function bodyOf(
  req: IncomingMessage,
  res: ServerResponse,
  ndjson: boolean,
): Promise<Uint8Array | ReadableStream<Uint8Array> | undefined> {
  if (req.method === 'GET' || req.method === 'HEAD') return undefined;
  if (ndjson) return Readable.toWeb(req) as ReadableStream<Uint8Array>;
  const read: ReadBody = await readBody(req, BUFFERED_BYTES);
  if (read.complete) return read.bytes;
  // What the mock leaves unread is never drained: the connection closes after the answer.
  res.shouldKeepAlive = false;
  return restOfBody(req, read.head);
}

/**
 * The URL of a request the pipeline can take as node:http parsed it: origin-form, a method Fetch
 * represents, not NDJSON, and a path neither the loopback guard nor the page looks at (they take
 * Fetch requests). Parsed as Fetch would, so `/v1/../_mock` is `/_mock` here too.
 */
function apiUrl(req: IncomingMessage, origin: string, ndjson: boolean): URL | undefined {
  const target = req.url ?? '/';
  if (ndjson || !target.startsWith('/') || !isFetchMethod(req.method ?? 'GET')) return undefined;
  let url: URL;
  try {
    url = new URL(origin + target);
  } catch {
    return undefined;
  }
  const path = url.pathname;
  return path === '/' || path === '/_mock' || path.startsWith('/_mock/') ? undefined : url;
}

/**
 * Tells the mock the client went away before the answer finished (it stops following, and changes
 * nothing). Made on first use: only a streamed answer or a built Request needs it.
 */
class Departure {
  #controller: AbortController | undefined;

  constructor(private readonly res: ServerResponse) {}

  get signal(): AbortSignal {
    if (!this.#controller) {
      const controller = new AbortController();
      this.#controller = controller;
      const { res } = this;
      if (res.destroyed && !res.writableFinished) controller.abort();
      else
        res.once('close', () => {
          if (!res.writableFinished) controller.abort();
        });
    }
    return this.#controller.signal;
  }
}

// The body of a GET or HEAD, as the pipeline reads it.
const NO_BYTES = new Uint8Array(0);

/** A call of the loopback door as the pipeline reads it; its Fetch `Request` is built on first use. */
class DoorRequest implements Incoming {
  #request: Request | undefined;

  constructor(
    readonly method: string,
    readonly url: URL,
    readonly headers: RawHeaders,
    readonly bytes: Uint8Array,
    private readonly req: IncomingMessage,
    private readonly origin: string,
    private readonly departure: Departure,
  ) {}

  /** For the rules that read the Fetch request (a file upload, a stream that follows the client). */
  request(): Request {
    this.#request ??= toRequest(this.req, this.origin, this.bytes, this.departure.signal);
    return this.#request;
  }
}

async function bridge(
  handlers: DoorHandlers,
  req: IncomingMessage,
  res: ServerResponse,
  origin: string,
): Promise<void> {
  // Held now: once the request stream is destroyed, req.socket reads null.
  const socket = req.socket;
  const headers = new RawHeaders(req.rawHeaders);
  const ndjson = NDJSON.test(headers.get('content-type') ?? '');
  const url = apiUrl(req, origin, ndjson);
  const method = req.method ?? 'GET';
  const departure = new Departure(res);
  let answer: Answer;
  try {
    const body = await bodyOf(req, res, ndjson);
    if (url && !(body instanceof ReadableStream)) {
      const incoming = new DoorRequest(method, url, headers, body ?? NO_BYTES, req, origin, departure);
      answer = await handlers.serve(incoming);
    } else {
      // The request carries the signal only where the mock may answer with a stream that follows it
      // (undici's abort wiring costs a few µs and a finalizer per request); a streamed answer is
      // cancelled by writeResponse all the same when the client goes away.
      const mayStream = method === 'GET' || ndjson || /[?&]stream=/.test(req.url ?? '');
      answer = await handlers.fetch(toRequest(req, origin, body, mayStream ? departure.signal : undefined));
    }
  } catch (error) {
    if (!(error instanceof UnbridgeableRequest)) throw error;
    const code = error.status === 405 ? 'method_not_allowed' : 'invalid_request';
    return writeError(res, error.status, code, error.message);
  }
  if (answer instanceof JsonAnswer) return writeText(res, answer.status, answer.headers, answer.text);
  if (answer.type === 'error') {
    // drop_after_commit: the work is done, the answer never comes.
    socket.destroy();
    return;
  }
  await writeResponse(res, answer, departure.signal);
}
