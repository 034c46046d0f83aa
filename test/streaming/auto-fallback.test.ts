import { AgentClient, InvalidResponseError } from 'agent-messaging';
import type { RequestLogEntry } from 'agent-messaging/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentMessages, pieces, requestsSince, startWorld, textOf, type World } from './harness.js';

let world: World;
beforeAll(async () => {
  world = await startWorld('loopback');
});
afterEach(() => world.mock.faults.clear());
afterAll(() => world?.close());

const written = pieces(300);
const text = written.join('');
const isStart = (entry: RequestLogEntry) => entry.method === 'POST' && entry.query.stream === 'true';

/** Writes the pieces through `client` and answers the result, the requests the mock got and what it created. */
async function writeAll(client: AgentClient, transport?: 'auto' | 'stream') {
  const countBefore = (await agentMessages(world)).length;
  const before = world.mock.requests.length;
  const reply = await client.messages.startReply(world.conversationId, {}, { transport });
  for (const piece of written) await reply.write(piece);
  const result = await reply.complete();
  const requests = requestsSince(world, before);
  const created = (await agentMessages(world)).slice(countBefore);
  return { reply, result, requests, created };
}

/** The text the append requests carried, in order. */
const appended = (requests: RequestLogEntry[]) =>
  requests
    .filter((entry) => entry.path.endsWith('/append'))
    .map((entry) => (JSON.parse(entry.body ?? '{}') as { value: string }).value)
    .join('');

/**
 * A client behind a proxy that answers every NDJSON request itself with a plain JSON 200, as a
 * gateway that does not pass streamed bodies might; other requests reach the mock.
 */
function clientBehindBufferingProxy() {
  const answered: string[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (request.headers.get('content-type') !== 'application/x-ndjson') return globalThis.fetch(request);
    answered.push(`${request.method} ${new URL(request.url).pathname}`);
    await request.body?.cancel();
    return Response.json({ ok: true });
  };
  const client = new AgentClient({ apiKey: world.apiKey, baseUrl: world.baseUrl, fetch });
  return { client, answered };
}

describe("transport 'auto' when the service will not stream the start", () => {
  it('falls back to append after a 400 to the NDJSON start, with one message holding exactly the written text', async () => {
    world.mock.faults.inject({
      method: 'POST',
      path: '/v1/conversations/*/messages',
      fault: 'status',
      status: 400,
    });
    const { reply, result, requests, created } = await writeAll(world.client);
    expect(reply.transport).toBe('append');
    const starts = requests.filter(isStart);
    expect(starts.map((entry) => entry.headers['content-type'])).toEqual([
      'application/x-ndjson',
      'application/json',
    ]);
    // The 400 created nothing, so the JSON start may carry the same key.
    expect(starts[1]!.headers['idempotency-key']).toBe(starts[0]!.headers['idempotency-key']);
    expect(appended(requests)).toBe(text);
    expect(requests.at(-1)!.path).toBe(`/v1/messages/${result.message_id}/complete`);
    expect(created.map((message) => [message.id, message.status])).toEqual([[result.message_id, 'sent']]);
    expect(textOf(created[0]!)).toBe(text);
  });

  it('falls back to append after a 200 that is not an event stream, with one message holding exactly the written text', async () => {
    const { client, answered } = clientBehindBufferingProxy();
    const { reply, result, requests, created } = await writeAll(client);
    expect(reply.transport).toBe('append');
    expect(answered).toEqual([`POST /v1/conversations/${world.conversationId}/messages`]);
    expect(requests.filter(isStart).map((entry) => entry.headers['content-type'])).toEqual([
      'application/json',
    ]);
    expect(appended(requests)).toBe(text);
    expect(requests.at(-1)!.path).toBe(`/v1/messages/${result.message_id}/complete`);
    expect(created.map((message) => [message.id, message.status])).toEqual([[result.message_id, 'sent']]);
    expect(textOf(created[0]!)).toBe(text);
  });

  it("makes transport 'stream' fail on a 200 that is not an event stream, sending nothing else", async () => {
    const { client, answered } = clientBehindBufferingProxy();
    const before = world.mock.requests.length;
    const error = await client.messages
      .startReply(world.conversationId, {}, { transport: 'stream' })
      .catch((thrown: unknown) => thrown);
    expect(InvalidResponseError.is(error) && error.message).toMatch(/not answered with an event stream/);
    expect(answered).toHaveLength(1);
    expect(requestsSince(world, before)).toEqual([]);
  });
});
