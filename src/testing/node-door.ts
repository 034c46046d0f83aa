// The node:http door: a real server on 127.0.0.1 that turns each IncomingMessage into a Request
// with a streamed body and pipes the Response back chunk by chunk, so an NDJSON body is applied
// line by line while the event stream flows the other way.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { MockServer } from './types.js';

type Fetch = (request: Request) => Promise<Response>;

/** Listens on 127.0.0.1:`port` (0 picks a free port) and answers every request with `fetch`. */
export async function serveOnLoopback(fetch: Fetch, port: number): Promise<MockServer> {
  const server = createServer((req, res) => {
    const socket = req.socket;
    // Nothing the bridge meets may crash the process; a broken exchange just closes its connection.
    bridge(fetch, req, res, `http://127.0.0.1:${(server.address() as AddressInfo).port}`).catch(() =>
      socket.destroy(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Open event streams never end on their own: end every connection now.
        server.closeAllConnections();
      }),
  };
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
  res.on('close', () => {
    if (!res.writableFinished) aborted.abort();
  });
  const method = req.method ?? 'GET';
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const hasBody = method !== 'GET' && method !== 'HEAD';
  const request = new Request(new URL(req.url ?? '/', origin), {
    method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
    duplex: 'half',
    signal: aborted.signal,
  } as RequestInit);
  const response = await fetch(request);
  if (response.type === 'error') {
    // drop_after_commit: the work is done, the answer never comes.
    socket.destroy();
    return;
  }
  const outHeaders: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    // node:http frames the body itself.
    if (name !== 'transfer-encoding') outHeaders[name] = value;
  });
  res.writeHead(response.status, outHeaders);
  res.flushHeaders();
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  aborted.signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined), { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      // Each chunk is written at once; an SSE event is never held back in a buffer.
      res.write(value);
    }
    res.end();
  } catch {
    // A cut stream: close the connection once what was written is flushed, before the chunked
    // body's last chunk, so the client sees a broken body after the events it was sent.
    socket.end(() => socket.destroy());
  }
}
