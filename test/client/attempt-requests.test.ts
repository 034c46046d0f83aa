// What each attempt puts on the wire. Without a `fetch` option the transport attaches a JSON body to
// every attempt itself (ky's Request carries none, so ky's per-attempt clone has no stream to tee);
// with one, the client's fetch gets the whole Request, body included. Either way every attempt of a
// call carries the same body and the same Idempotency-Key, over msw and over loopback HTTP.
import { AgentClient } from 'agent-messaging';
import { describe, expect, test } from 'vitest';
import { bodyOf, useWorld, type World } from './world.js';

const SEND_PATH = '/v1/conversations/*/messages';

/** A client on `globalThis.fetch` (no `fetch` option), logging into the world's lines. */
const plainClient = (world: World) =>
  new AgentClient({ apiKey: world.apiKey, baseUrl: world.baseUrl, logger: world.options().logger });

describe.each(['msw', 'loopback'] as const)('attempt bodies over %s', (door) => {
  const w = useWorld(door);

  test('without a fetch option, a send retried after a 503 carries the whole body and one key on both attempts', async () => {
    w.mock.faults.inject({ method: 'POST', path: SEND_PATH, fault: 'status', status: 503, retry_after: 0 });

    const { message } = await plainClient(w).messages.send(w.conversationId, { text: 'hello twice' });

    const sent = w.requests();
    expect(sent).toHaveLength(2);
    for (const entry of sent) {
      expect(entry.headers['content-type']).toBe('application/json');
      expect(bodyOf(entry)).toEqual({
        schema: 'svc.agent-send.v1',
        content: [{ type: 'text', text: 'hello twice' }],
        fallbackText: 'hello twice',
      });
    }
    expect(sent[1]?.headers['idempotency-key']).toBe(sent[0]?.headers['idempotency-key']);
    const { messages } = await w.client.conversations.listMessages(w.conversationId);
    expect(messages.filter((entry) => entry.sender.id === w.agentId).map((entry) => entry.id)).toEqual([
      message.id,
    ]);
  });

  test('without a fetch option, a raw JSON call retried after a 503 carries its body on both attempts', async () => {
    w.mock.faults.inject({ method: 'POST', path: SEND_PATH, fault: 'status', status: 503, retry_after: 0 });
    const body = { schema: 'svc.agent-send.v1', content: [], fallbackText: '', stream: true };

    const response = await plainClient(w)._transport.raw('messages.send', {
      params: { conversation_id: w.conversationId },
      query: { stream: true },
      body,
      accept: 'text/event-stream',
    });
    await response.body?.cancel();

    expect(response.status).toBe(200);
    const sent = w.requests();
    expect(sent.map((entry) => bodyOf(entry))).toEqual([body, body]);
    expect(sent[1]?.headers['idempotency-key']).toBe(sent[0]?.headers['idempotency-key']);
  });

  test("without a fetch option, a caller's Content-Type replaces the SDK's on the attempt", async () => {
    await plainClient(w).messages.send(
      w.conversationId,
      { text: 'typed' },
      { headers: { 'Content-Type': 'application/json; charset=utf-8' } },
    );

    const [sent] = w.requests();
    expect(sent?.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(bodyOf(sent)).toMatchObject({ content: [{ type: 'text', text: 'typed' }] });
  });

  test('a fetch option that reads only the Request it is given still sees the body, on every attempt', async () => {
    w.mock.faults.inject({ method: 'POST', path: SEND_PATH, fault: 'status', status: 503, retry_after: 0 });
    const bodies: string[] = [];
    const client = new AgentClient({
      apiKey: w.apiKey,
      baseUrl: w.baseUrl,
      // A wrapper that ignores `init`, as some do: the Request alone must hold everything.
      fetch: async (input) => {
        const request = input as Request;
        bodies.push(await request.clone().text());
        return globalThis.fetch(request);
      },
    });

    await client.messages.send(w.conversationId, { text: 'hello' });

    expect(bodies).toHaveLength(2);
    expect(bodies.map((text) => JSON.parse(text))).toEqual([
      expect.objectContaining({ fallbackText: 'hello' }),
      expect.objectContaining({ fallbackText: 'hello' }),
    ]);
    expect(w.requests().map((entry) => bodyOf(entry).fallbackText)).toEqual(['hello', 'hello']);
  });
});
