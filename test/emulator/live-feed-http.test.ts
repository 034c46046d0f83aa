// GET /_mock/events, GET /_mock/state and GET /_mock/files/{id} over the loopback server.
import { createMockService, mockSchemas } from 'agent-messaging/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { newKey, setupScenario, textSend } from '../mock/helpers.js';
import { useMockOverLoopback } from '../mock/stream-helpers.js';
import { FeedReader } from './feed-reader.js';

// The wire schemas as values, from the public namespace.
const { MockStateSnapshot } = mockSchemas;

// A short keep-alive, so an idle feed shows its comment within the test.
const ctx = useMockOverLoopback({ keepAliveMs: 50 });
const open: FeedReader[] = [];

async function connect(): Promise<FeedReader> {
  const { reader, response } = await FeedReader.connect(ctx.baseUrl);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/event-stream');
  open.push(reader);
  // The first comment is written right after subscribing: from here on nothing is missed.
  await reader.waitForComment('connected');
  return reader;
}

/** Waits (bounded by the test timeout) until the mock has at most `count` listeners. */
async function listenersDropTo(count: number): Promise<void> {
  while (ctx.mock.events.listenerCount > count) await new Promise((resolve) => setTimeout(resolve, 10));
}

afterEach(() => {
  for (const reader of open.splice(0)) reader.close();
});

describe('GET /_mock/events', () => {
  it('streams every change from the moment of connection, each frame named by its type', async () => {
    const before = ctx.mock.createUser({ display_name: 'Before' });
    const feed = await connect();
    const s = await setupScenario(ctx.mock);
    await ctx.call('POST', `/v1/conversations/${s.conversationId}/messages`, {
      token: s.apiKey,
      idempotencyKey: newKey(),
      body: textSend('hello from the bot'),
    });
    const created = await feed.waitFor((event) => event.type === 'message.created');
    expect(created).toMatchObject({
      type: 'message.created',
      conversation_id: s.conversationId,
      message: { sender: { id: s.agentId }, parts: [{ type: 'text', text: 'hello from the bot' }] },
    });
    await ctx.call('POST', '/_mock/clock/advance', { body: { seconds: 60 } });
    await feed.waitFor((event) => event.type === 'clock');
    const types = feed.events.map((event) => event.type);
    expect(types).toContain('agent.created');
    expect(types).toContain('conversation.updated');
    // Users made before connecting are not replayed: the snapshot is for the past.
    const users = feed.events.flatMap((event) => (event.type === 'user.created' ? [event.user.id] : []));
    expect(users).toEqual([s.userId]);
    expect(users).not.toContain(before.user.id);
    const requests = feed.events.flatMap((event) => (event.type === 'request' ? [event.request] : []));
    expect(requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'POST /v1/agents',
      `PATCH /v1/agents/${s.agentId}/webhook`,
      `POST /v1/conversations/${s.conversationId}/messages`,
    ]);
    expect(requests[1]?.headers.authorization).toBe('Bearer ***');
  });

  it('sends keep-alive comments while idle and a reset event on reset', async () => {
    const feed = await connect();
    await feed.waitForComment('keep-alive');
    await ctx.call('POST', '/_mock/reset');
    await feed.waitFor((event) => event.type === 'reset');
    expect(feed.events.map((event) => event.type)).toEqual(['reset']);
  });

  it('unsubscribes a client that went away', async () => {
    // Feeds of earlier tests were closed by the client; the server lets go of them on its own schedule.
    await listenersDropTo(0);
    const gone = await connect();
    const staying = await connect();
    expect(ctx.mock.events.listenerCount).toBe(2);
    gone.close();
    await gone.ended();
    await listenersDropTo(1);
    ctx.mock.createUser({ display_name: 'Someone' });
    await staying.waitFor((event) => event.type === 'user.created');
    expect(gone.events).toEqual([]);
  });

  it('ends an open feed when the server closes', async () => {
    const mock = createMockService();
    const server = await mock.listen({ port: 0 });
    const { reader } = await FeedReader.connect(server.baseUrl);
    await reader.waitForComment('connected');
    await server.close();
    await reader.ended();
    expect(reader.events).toEqual([]);
  });
});

describe('GET /_mock/state', () => {
  it('answers a snapshot for the first paint, with session tokens and without agent secrets', async () => {
    const s = await setupScenario(ctx.mock);
    ctx.mock.postUserMessage(s.conversationId, { user_id: s.userId, text: 'hi there' });
    await ctx.mock.idle();
    const answer = await ctx.call('GET', '/_mock/state');
    expect(answer.status).toBe(200);
    const snapshot = MockStateSnapshot.parse(answer.body);
    expect(snapshot.agents[0]).toMatchObject({ id: s.agentId, handle: 'helper_bot', status: 'active' });
    expect(snapshot.users[0]).toMatchObject({ id: s.userId, session_token: s.sessionToken });
    expect(snapshot.conversations[0]).toMatchObject({
      id: s.conversationId,
      kind: 'agent',
      messages: [{ sender: { id: s.userId }, parts: [{ text: 'hi there' }] }],
    });
    expect(snapshot.deliveries.map((d) => [d.type, d.status])).toEqual([
      ['webhook.test', 204],
      ['message.received', 204],
    ]);
    expect(snapshot.requests).toHaveLength(2);
    const text = JSON.stringify(answer.body);
    expect(text).not.toContain(s.apiKey);
    expect(text).not.toContain(s.webhookSecret);
  });
});

describe('GET /_mock/files/{attachment_id}', () => {
  it('serves an uploaded file by its id, and 404 before the upload', async () => {
    const s = await setupScenario(ctx.mock);
    const created = await ctx.call('POST', '/v1/attachments', {
      token: s.apiKey,
      body: { name: 'notes.txt', mime_type: 'text/plain', size_bytes: 5 },
    });
    const { attachment_id, upload_url } = created.body as { attachment_id: string; upload_url: string };
    expect((await ctx.call('GET', `/_mock/files/${attachment_id}`)).status).toBe(404);
    await fetch(upload_url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    const file = await fetch(`${ctx.baseUrl}/_mock/files/${attachment_id}`);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('text/plain');
    expect(file.headers.get('content-disposition')).toBe('attachment; filename="notes.txt"');
    expect(await file.text()).toBe('hello');
    const snapshot = MockStateSnapshot.parse((await ctx.call('GET', '/_mock/state')).body);
    expect(snapshot.attachments).toEqual([
      {
        id: attachment_id,
        agent_id: s.agentId,
        name: 'notes.txt',
        mime_type: 'text/plain',
        size_bytes: 5,
        uploaded: true,
      },
    ]);
  });
});
