// API.md's msw door, as written there: `setupServer(...mock.handlers)`. The handlers are the same
// as mswHandlers(mock) from agent-messaging/testing/msw; this checks the property itself: a client's
// send and a streamed read go through msw to this mock, and the handlers are built once.
import { AgentClient } from 'agent-messaging';
import { createMockService } from 'agent-messaging/testing';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const mock = createMockService({ baseUrl: 'http://handlers.test' });
const server = setupServer(...mock.handlers);
beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterAll(() => server.close());

describe('mock.handlers (API.md)', () => {
  it('answers a client through msw, and the request reaches this mock', async () => {
    const { apiKey, conversationId } = await mock.seed();
    const client = new AgentClient({ apiKey, baseUrl: mock.baseUrl });
    const sent = await client.messages.send(conversationId, { text: 'through msw' });
    const logged = mock.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/messages'));
    expect(logged).toHaveLength(1);
    expect(logged[0]?.headers['idempotency-key']).toMatch(/\S/);
    const { messages } = await client.conversations.listMessages(conversationId);
    expect(messages.map((m) => m.id)).toContain(sent.message.id);
  });

  it('streams a reply through msw', async () => {
    const { apiKey, conversationId } = await mock.seed({ handle: 'streamer' });
    const client = new AgentClient({ apiKey, baseUrl: mock.baseUrl });
    const result = await client.messages.reply(conversationId, ['one ', 'two']);
    expect(result.outcome).toBe('complete');
    const { messages } = await client.conversations.listMessages(conversationId);
    const reply = messages.find((m) => m.id === result.message_id);
    expect(reply).toMatchObject({ status: 'sent', parts: [{ text: 'one two' }] });
  });

  it('builds the handlers once', () => {
    expect(mock.handlers).toBe(mock.handlers);
    expect(mock.handlers).toHaveLength(1);
  });
});
