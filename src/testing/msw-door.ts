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
  return [http.all(`${baseUrl}/*`, ({ request }) => fetch(request))];
}
