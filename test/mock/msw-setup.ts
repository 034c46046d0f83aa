// One mock per test file behind msw, reset before every test, with a recording webhook receiver.

import { createMockService, type MockServiceOptions } from 'agent-messaging/testing';
import { mswHandlers } from 'agent-messaging/testing/msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { client, WebhookReceiver } from './helpers.js';

/** Starts msw with the mock's handlers for the file; unhandled requests fail the test. */
export function useMockOverMsw(options: MockServiceOptions = {}) {
  const receiver = new WebhookReceiver();
  const mock = createMockService({ fetch: receiver.fetch, ...options });
  const server = setupServer(...mswHandlers(mock));
  beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
  beforeEach(async () => {
    await mock.idle();
    mock.reset();
    receiver.received.length = 0;
    receiver.status = 204;
  });
  afterAll(() => server.close());
  return { mock, receiver, server, call: client(mock.baseUrl) };
}
