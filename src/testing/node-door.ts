// The node:http door: a real server on 127.0.0.1 over the shared node:http <-> Fetch bridge
// (../node-bridge.ts). A JSON body is read whole before the mock sees it; an NDJSON body streams in,
// so it is applied line by line while the event stream flows the other way.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import {
  type ReadBody,
  readBody,
  restOfBody,
  toRequest,
  UnbridgeableRequest,
  writeError,
  writeResponse,
} from '../node-bridge.js';
import { MAX_BODY_BYTES } from './http.js';
import type { MockServer } from './types.js';

type Fetch = (request: Request) => Promise<Response>;

// Read into memory before the mock sees the request: the service's limit and one byte more, enough
// for the mock to tell a body over the limit (413). A larger body (a file upload) streams on.
const BUFFERED_BYTES = MAX_BODY_BYTES + 1;
const NDJSON = /^\s*application\/x-ndjson\b/i;

/** Listens on 127.0.0.1:`port` (0 picks a free port) and answers every request with `fetch`. */
export async function serveOnLoopback(fetch: Fetch, port: number): Promise<MockServer> {
  let origin = '';
  const server = createServer((req, res) => {
    const socket = req.socket;
    // Nothing the bridge meets may crash the process; a broken exchange just closes its connection.
    bridge(fetch, req, res, origin).catch(() => socket.destroy());
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
): Promise<Uint8Array | ReadableStream<Uint8Array> | undefined> {
  if (req.method === 'GET' || req.method === 'HEAD') return undefined;
  if (NDJSON.test(req.headers['content-type'] ?? ''))
    return Readable.toWeb(req) as ReadableStream<Uint8Array>;
  const read: ReadBody = await readBody(req, BUFFERED_BYTES);
  if (read.complete) return read.bytes;
  // What the mock leaves unread is never drained: the connection closes after the answer.
  res.shouldKeepAlive = false;
  return restOfBody(req, read.head);
}

async function bridge(
  fetch: Fetch,
  req: IncomingMessage,
  res: ServerResponse,
  origin: string,
): Promise<void> {
  // Held now: once the request stream is destroyed, req.socket reads null.
  const socket = req.socket;
  const aborted = new AbortController();
  // The client went away before the answer finished: tell the mock (it stops following, and changes nothing).
  res.once('close', () => {
    if (!res.writableFinished) aborted.abort();
  });
  let request: Request;
  try {
    // The request carries the signal only where the mock may answer with a stream that follows it
    // (undici's abort wiring costs a few µs and a finalizer per request); a streamed answer is
    // cancelled by writeResponse all the same when the client goes away.
    const mayStream =
      req.method === 'GET' ||
      NDJSON.test(req.headers['content-type'] ?? '') ||
      /[?&]stream=/.test(req.url ?? '');
    request = toRequest(req, origin, await bodyOf(req, res), mayStream ? aborted.signal : undefined);
  } catch (error) {
    if (!(error instanceof UnbridgeableRequest)) throw error;
    const code = error.status === 405 ? 'method_not_allowed' : 'invalid_request';
    return writeError(res, error.status, code, error.message);
  }
  const response = await fetch(request);
  if (response.type === 'error') {
    // drop_after_commit: the work is done, the answer never comes.
    socket.destroy();
    return;
  }
  await writeResponse(res, response, aborted.signal);
}
