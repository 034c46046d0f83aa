// The msw door: the mock as msw request handlers, built from msw's own `http` namespace. The named
// entry (`agent-messaging/testing/msw`) passes the one it imports; `mock.handlers` (API.md) is a
// property, so it loads msw without `await`: through `require` of an ES module (Node 22.12+, Bun,
// Deno), reached with `process.getBuiltinModule` so that the testing entry imports no `node:` module.
// Nothing here imports msw at run time, so the testing entry runs, and type-checks, without msw (an
// optional peer): only `mock.handlers` then fails, and says why.
import type { HttpHandler, http as mswHttp } from 'msw';
import type { MockService } from './mock-service.js';

/** The service's catch-all handler, answered by the mock. @internal */
export function handlersWith(
  http: typeof mswHttp,
  mock: Pick<MockService, 'baseUrl' | 'fetch'>,
): HttpHandler[] {
  return [
    http.all(`${mock.baseUrl}/*`, async ({ request }) => breakAfterDelivery(await mock.fetch(request))),
  ];
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

type NodeModule = { createRequire(from: string): (id: string) => unknown };
type WithBuiltins = { process?: { getBuiltinModule?: (id: string) => unknown } };

const INSTALL = 'npm install --save-dev msw@3';
const OR_IMPORT = "or use mswHandlers(mock) from 'agent-messaging/testing/msw'";

/** msw's `http` namespace, loaded on first use (`mock.handlers`). @internal */
export function loadMswHttp(): typeof mswHttp {
  const nodeModule = (globalThis as WithBuiltins).process?.getBuiltinModule?.('node:module') as
    | NodeModule
    | undefined;
  if (!nodeModule) {
    throw new Error(
      `mock.handlers loads msw synchronously, which needs Node 22.12+, Bun or Deno; ${OR_IMPORT}`,
    );
  }
  let msw: { http?: typeof mswHttp };
  try {
    msw = nodeModule.createRequire(import.meta.url)('msw') as { http?: typeof mswHttp };
  } catch (cause) {
    throw new Error(`mock.handlers needs msw, an optional peer dependency (${INSTALL}); ${OR_IMPORT}`, {
      cause,
    });
  }
  if (typeof msw.http?.all !== 'function') throw new Error(`mock.handlers needs msw 3 (${INSTALL})`);
  return msw.http;
}
