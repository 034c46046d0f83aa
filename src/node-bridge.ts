// node:http <-> Fetch: the one bridge under both `toNodeHandler` (agent-messaging/node) and the mock's
// loopback door. Kept thin, since it is most of what a delivery or a mock call costs on Node: a body
// that is not streamed is read into one Buffer (no web stream round trip), an answer that is not a
// stream goes out as one write of its headers and body, and a request Fetch cannot represent (a bad
// Host, TRACE) is a 4xx, never a 500 that a sender would retry forever.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A request that cannot become a Fetch `Request`; answer it with `status`. */
export class UnbridgeableRequest extends Error {
  override name = 'UnbridgeableRequest';

  constructor(
    readonly status: 400 | 405,
    message: string,
  ) {
    super(message);
  }
}

// Methods the Fetch standard refuses to construct a Request with.
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);
// A Host is a name or address and a port: anything that would change the URL's path is refused.
const BAD_HOST = /[\s/\\?#@]/;
// Answers written as they are produced; every other answer is buffered and written at once.
const STREAMED_TYPES = /^\s*(?:text\/event-stream|application\/x-ndjson)\b/i;

// Answers sent as UTF-8 text (JSON, HTML, plain text); anything else goes out as the exact bytes.
const TEXT_TYPES = /^\s*(?:application\/json|text\/)/i;

/** False for the methods Fetch refuses to construct a Request with (CONNECT, TRACE, TRACK). */
export function isFetchMethod(method: string): boolean {
  return !FORBIDDEN_METHODS.has(method.toUpperCase());
}

/** A body read whole, or the part read before it grew over the limit (reading stops there). */
export type ReadBody = { complete: true; bytes: Buffer } | { complete: false; head: Buffer[] };

/** Reads the request body, at most `limit` bytes plus the chunk that crossed it. */
export function readBody(req: IncomingMessage, limit: number): Promise<ReadBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = () =>
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    function onData(chunk: Buffer | string) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += bytes.byteLength;
      chunks.push(bytes);
      if (size <= limit) return;
      finish();
      req.pause();
      resolve({ complete: false, head: chunks });
    }
    function onEnd() {
      finish();
      resolve({ complete: true, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    }
    function onError(error: unknown) {
      finish();
      reject(error);
    }
    function onClose() {
      finish();
      reject(new Error('the client went away before the body was read'));
    }
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** A body that was cut at the limit, as a stream: the part already read, then the rest as it comes. */
export function restOfBody(req: IncomingMessage, head: readonly Buffer[]): ReadableStream<Uint8Array> {
  async function* chunks() {
    yield* head;
    for await (const chunk of req) yield chunk as Buffer;
  }
  // ReadableStream.from is in Node 20.6+; the DOM lib's types do not have it yet.
  type WithFrom = { from(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> };
  return (ReadableStream as unknown as WithFrom).from(chunks());
}

/**
 * The Fetch `Request` of a node:http request with the given body (none for GET and HEAD), its origin
 * read from its socket and Host header. Throws {@link UnbridgeableRequest} for one Fetch cannot
 * represent.
 */
export function toRequest(req: IncomingMessage, body: Uint8Array): Request {
  const host = req.headers.host ?? 'localhost';
  if (host === '' || BAD_HOST.test(host)) {
    throw new UnbridgeableRequest(400, `host: ${JSON.stringify(host)} is not a host name and port`);
  }
  const encrypted = (req.socket as { encrypted?: boolean } | undefined)?.encrypted === true;
  const origin = `${encrypted ? 'https' : 'http'}://${host}`;
  const method = req.method ?? 'GET';
  if (!isFetchMethod(method)) {
    throw new UnbridgeableRequest(405, `method: ${method} is not served here`);
  }
  const target = req.url ?? '/';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  try {
    const headers = new Headers();
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
    return new Request(target.startsWith('/') ? origin + target : target, {
      method,
      headers,
      ...(hasBody ? { body, duplex: 'half' } : {}),
    } as RequestInit);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UnbridgeableRequest(400, `the request cannot be read: ${reason}`);
  }
}

/** A JSON error answer in the wire's shape (`{ error: { code, message } }`), written at once. */
export function writeError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  writeText(res, status, { 'content-type': 'application/json' }, body);
}

/**
 * Writes a text answer (JSON) whose headers are already in hand, head and body in one write: no
 * Fetch `Response` in between. `headers` has lower-case names; the body's length is set here.
 */
export function writeText(
  res: ServerResponse,
  status: number,
  headers: Readonly<Record<string, string>>,
  text: string,
): void {
  const flat: string[] = [];
  for (const name in headers) {
    if (name !== 'content-length' && name !== 'transfer-encoding') flat.push(name, headers[name]!);
  }
  flat.push('content-length', String(Buffer.byteLength(text)));
  res.writeHead(status, flat);
  res.end(text);
}

/**
 * Writes a Fetch `Response` to node:http. A buffered answer goes out with its headers in one write;
 * an event stream or NDJSON answer is written chunk by chunk as it comes (never held in a buffer).
 * `signal` aborts a streamed answer (the client went away). A stream that fails midway closes the
 * connection before the chunked body's last chunk, so the client sees a broken body.
 */
export async function writeResponse(
  res: ServerResponse,
  response: Response,
  signal?: AbortSignal,
): Promise<void> {
  const headers: string[] = [];
  const type = response.headers.get('content-type') ?? '';
  const buffered = response.body !== null && !STREAMED_TYPES.test(type);
  response.headers.forEach((value, name) => {
    // node:http frames the body itself; a buffered body's length is set from its bytes.
    if (name === 'transfer-encoding' || (buffered && name === 'content-length')) return;
    headers.push(name, value);
  });
  if (response.body === null) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  if (buffered) {
    // Text goes out as a string: node:http then sends its head and body in one write() instead of a
    // writev() of two buffers, which the profiles showed as the largest single cost of a small answer.
    const body = TEXT_TYPES.test(type) ? await response.text() : new Uint8Array(await response.arrayBuffer());
    headers.push(
      'content-length',
      String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength),
    );
    res.writeHead(response.status, headers);
    res.end(body);
    return;
  }
  res.writeHead(response.status, headers);
  res.flushHeaders();
  const reader = response.body.getReader();
  signal?.addEventListener('abort', () => void reader.cancel().catch(() => undefined), { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      // Each chunk is written at once; an event is never held back in a buffer.
      res.write(value);
    }
    res.end();
  } catch {
    const socket = res.socket;
    socket?.end(() => socket.destroy());
  }
}
