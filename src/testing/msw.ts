// `agent-messaging/testing/msw`: the mock service as msw request handlers. msw is an optional peer
// dependency, so it is imported here only: `agent-messaging/testing` (and its types) never touches
// it, and a project without msw type-checks and runs the loopback door.
import { type HttpHandler, http } from 'msw';
import type { MockService } from './mock-service.js';
import { handlersWith } from './msw-door.js';

/**
 * msw handlers for every path under `mock.baseUrl`, answered by the mock. The same handlers as
 * `mock.handlers`, typed with msw's own types and loaded with a plain import (any runtime, any bundler).
 *
 * @example
 * import { setupServer } from 'msw/node';
 * import { createMockService } from 'agent-messaging/testing';
 * import { mswHandlers } from 'agent-messaging/testing/msw';
 *
 * const mock = createMockService();
 * const server = setupServer(...mswHandlers(mock));
 * server.listen({ onUnhandledFrame: 'error' });
 */
export function mswHandlers(mock: Pick<MockService, 'baseUrl' | 'fetch'>): HttpHandler[] {
  return handlersWith(http, mock);
}
