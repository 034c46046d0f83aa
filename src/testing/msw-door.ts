// The msw door: request handlers that answer through mock.fetch. This is the only module that
// touches msw, an optional peer dependency. It is loaded with require() on first use of
// `mock.handlers` (Node 22.12+ can require ES modules), so importing `agent-messaging/testing`
// and using the loopback server work without msw installed.
import { createRequire } from 'node:module';
import type { HttpHandler } from 'msw';

type Msw = typeof import('msw');

function loadMsw(): Msw {
  try {
    return createRequire(import.meta.url)('msw') as Msw;
  } catch (error) {
    throw new Error(
      'mock.handlers needs the msw package (npm install --save-dev msw@3); mock.listen() works without it',
      {
        cause: error,
      },
    );
  }
}

/** msw handlers for every path under `baseUrl`, answered by the mock. */
export function createMswHandlers(
  baseUrl: string,
  fetch: (request: Request) => Promise<Response>,
): HttpHandler[] {
  const { http } = loadMsw();
  return [http.all(`${baseUrl}/*`, async ({ request }) => breakAfterDelivery(await fetch(request)))];
}

/**
 * The answer with a body whose error is passed on one macrotask late. When a body errors, msw's
 * interceptor destroys the client's socket one tick later, and destroying it discards the bytes it
 * pushed that the client has not read yet: a stream cut right after an event (cut_stream) would
 * lose that event, or the whole answer when the cut follows the first one (the client's fetch then
 * fails instead of its body read). The loopback door flushes before it closes, so needs none of this.
 */
function breakAfterDelivery(response: Response): Response {
  if (!response.body) return response;
  const reader = response.body.getReader();
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          await new Promise((resolve) => setTimeout(resolve, 0));
          if (!cancelled) controller.error(error);
          return;
        }
        if (cancelled) return;
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      },
      cancel(reason) {
        cancelled = true;
        return reader.cancel(reason);
      },
    },
    // Read only when msw reads, so the mock's stream sees the same backpressure as without this.
    { highWaterMark: 0 },
  );
  const { status, statusText, headers } = response;
  return new Response(body, { status, statusText, headers });
}
