// The loopback door: a real node:http server on 127.0.0.1 in front of the mock's one entry, over the
// shared node:http bridge (../node-bridge.ts). A request becomes a MockRequest as node:http parsed it
// (its headers as Fetch `Headers`; a JSON body read whole, an NDJSON body or a body past the limit as
// a stream, so a streamed send is applied line by line while its event stream flows back). The
// loopback guard and the emulator page, which only this door has, come first. A JSON answer goes out
// as its text in one write, any other answer through the bridge.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { isFetchMethod, readBody, restOfBody, writeError, writeResponse, writeText } from '../node-bridge.js';
import { isNdjson } from './body.js';
import { emulatorPage } from './emulator/serve.js';
import {
  type Answer,
  errorResponse,
  JsonAnswer,
  MAX_BODY_BYTES,
  type MockRequest,
  type RequestBody,
  withHeaders,
} from './http.js';
import { newId } from './ids.js';
import { loopbackRefusal } from './loopback-guard.js';
import type { MockServer } from './mock-service.js';

/** The mock's one entry, as the door calls it. */
export type Entry = (request: MockRequest) => Promise<Answer>;

// Read into memory before the mock sees the request: the service's limit and one byte more, enough
// for the mock to tell a body over the limit (413). A larger body (a file upload) streams on.
const BUFFERED_BYTES = MAX_BODY_BYTES + 1;

/** Listens on 127.0.0.1:`port` (0 picks a free port) and answers every request through `entry`. */
export async function serveOnLoopback(entry: Entry, port: number): Promise<MockServer> {
  let origin = '';
  const server = createServer((req, res) => {
    const socket = req.socket;
    // Nothing the door meets may crash the process; a broken exchange just closes its connection.
    answer(entry, req, res, origin).catch(() => socket.destroy());
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

/** The body for the entry: bytes when read whole, a stream for NDJSON or past the limit. */
async function bodyOf(req: IncomingMessage, res: ServerResponse, ndjson: boolean): Promise<RequestBody> {
  if (req.method === 'GET' || req.method === 'HEAD') return null;
  if (ndjson) return Readable.toWeb(req) as ReadableStream<Uint8Array>;
  const read = await readBody(req, BUFFERED_BYTES);
  if (read.complete) return read.bytes;
  // What the mock leaves unread is never drained: the connection closes after the answer.
  res.shouldKeepAlive = false;
  return restOfBody(req, read.head);
}

async function answer(entry: Entry, req: IncomingMessage, res: ServerResponse, origin: string) {
  // Held now: once the request stream is destroyed, req.socket reads null.
  const socket = req.socket;
  const method = req.method ?? 'GET';
  if (!isFetchMethod(method))
    return writeError(res, 405, 'method_not_allowed', `method: ${method} is not served here`);
  // Parsed as Fetch would, so `/v1/../_mock` is `/_mock` here too.
  const target = req.url ?? '/';
  let url: URL;
  try {
    url = new URL(target.startsWith('/') ? origin + target : target);
  } catch {
    return writeError(
      res,
      400,
      'invalid_request',
      `the request target ${JSON.stringify(target)} is not a URL`,
    );
  }
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const request: MockRequest = { method, url, headers, body: await bodyOf(req, res, isNdjson(headers)) };
  const refusal = loopbackRefusal(request);
  const answer = refusal
    ? withHeaders(errorResponse(refusal), { 'request-id': newId('req') })
    : await (emulatorPage(request) ?? entry(request));
  if (answer instanceof JsonAnswer) return writeText(res, answer.status, answer.headers, answer.text);
  if (answer.type === 'error') {
    // drop_after_commit: the work is done, the answer never comes.
    socket.destroy();
    return;
  }
  // A client that goes away before the answer ends cancels its body (an event stream stops following).
  if (res.destroyed) return void (await answer.body?.cancel().catch(() => undefined));
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  await writeResponse(res, answer, gone.signal);
}
