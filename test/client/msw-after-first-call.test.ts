// msw patches globalThis.fetch when its server listens, and a client must look fetch up per call to be
// seen by it. ky and the client's ky instance are made with the first call now (29ef1b6), so a client
// whose first call went out before msw listened must still go through msw afterwards: nothing of the
// global fetch is kept from that first call. The mock's request log shows what reached it.
import { AgentClient, ConnectionError } from 'agent-messaging';
import { createMockService } from 'agent-messaging/testing';
import { setupServer } from 'msw/node';
import { afterAll, describe, expect, it } from 'vitest';

// A name under .test (never resolved, RFC 6761): without msw, the call fails to connect.
const mock = createMockService({ baseUrl: 'http://msw-after-first-call.test' });
const server = setupServer(...mock.handlers);
let listening = false;
// Closed by the test itself; here only when it failed before (msw refuses a second close).
afterAll(() => {
  if (listening) server.close();
});

describe('a client whose first call went out before msw listened', () => {
  it('goes through msw once it listens, and through the network again once it closes', async () => {
    const { apiKey, conversationId } = await mock.seed();
    const client = new AgentClient({ apiKey, baseUrl: mock.baseUrl, maxRetries: 0 });
    const sends = () =>
      mock.requests.filter((entry) => entry.method === 'POST' && entry.path.endsWith('/messages'));

    const before = await client.messages.send(conversationId, { text: 'before msw' }).catch((e) => e);
    expect(ConnectionError.is(before)).toBe(true);
    expect(sends()).toEqual([]);

    server.listen({ onUnhandledFrame: 'error' });
    listening = true;
    const sent = await client.messages.send(conversationId, { text: 'through msw' });
    expect(sent.message.id).toMatch(/^msg_/);
    expect(sends().map((entry) => JSON.parse(entry.body ?? '{}').fallbackText)).toEqual(['through msw']);

    server.close();
    listening = false;
    const after = await client.messages.send(conversationId, { text: 'after msw' }).catch((e) => e);
    expect(ConnectionError.is(after)).toBe(true);
    expect(sends()).toHaveLength(1);
  });
});
