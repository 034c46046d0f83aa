import { AgentClient, InternalServerError, NotFoundError, RequestAbortedError } from 'agent-messaging';
import { describe, expect, test } from 'vitest';
import { rejectionOf, useWorld, type World } from './world.js';

const sendPath = (world: World) => `/v1/conversations/${world.conversationId}/messages`;
const streamBody = { schema: 'svc.agent-send.v1', content: [], fallbackText: '', stream: true };

/** The first SSE event of a body, parsed; the rest of the body is cancelled. */
async function firstEvent(response: Response): Promise<{ event: string; data: Record<string, unknown> }> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  while (!text.includes('\n\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  await reader.cancel();
  const lines = text.split('\n\n')[0]!.split('\n');
  const field = (name: string) =>
    lines.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2) ?? '';
  return { event: field('event'), data: JSON.parse(field('data')) };
}

describe.each(['msw', 'loopback'] as const)('Transport.raw over %s', (door) => {
  const w = useWorld(door);

  test('hands over a 2xx answer unread, with auth and a generated Idempotency-Key', async () => {
    const response = await w.client._transport.raw('messages.send', {
      params: { conversation_id: w.conversationId },
      query: { stream: true },
      body: streamBody,
      accept: 'text/event-stream',
    });

    expect(response.status).toBe(200);
    expect(response.bodyUsed).toBe(false);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect((await firstEvent(response)).event).toBe('message.started');
    const [sent] = w.requests();
    expect(sent).toMatchObject({ method: 'POST', path: sendPath(w), query: { stream: 'true' } });
    expect(sent?.headers.accept).toBe('text/event-stream');
    expect(sent?.headers.authorization).toBe('Bearer ***');
    expect(sent?.headers['idempotency-key']).toMatch(/^[\x21-\x7e]{8,255}$/);
  });

  test('turns a non-2xx answer into the typed ApiError', async () => {
    const error = await rejectionOf(
      w.client._transport.raw('messages.send', {
        params: { conversation_id: 'cnv_missing' },
        query: { stream: true },
        body: streamBody,
      }),
    );

    expect(error).toBeInstanceOf(NotFoundError);
  });

  test('retries a JSON body after a 503, with the same key', async () => {
    w.mock.faults.inject({
      path: '/v1/conversations/*/messages',
      fault: 'status',
      status: 503,
      retry_after: 0,
    });

    const response = await w.client._transport.raw('messages.send', {
      params: { conversation_id: w.conversationId },
      query: { stream: true },
      body: streamBody,
    });

    expect((await firstEvent(response)).event).toBe('message.started');
    const keys = w.requests().map((entry) => entry.headers['idempotency-key']);
    expect(keys).toEqual([keys[0], keys[0]]);
  });

  test('sends a byte-stream body once, with duplex, and does not retry it', async () => {
    w.mock.faults.inject({
      path: '/v1/conversations/*/messages',
      fault: 'status',
      status: 503,
      retry_after: 0,
    });
    const line = new TextEncoder().encode(`${JSON.stringify(streamBody)}\n`);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(line);
        controller.close();
      },
    });

    const error = await rejectionOf(
      w.client._transport.raw('messages.send', {
        params: { conversation_id: w.conversationId },
        query: { stream: true },
        body,
        contentType: 'application/x-ndjson',
      }),
    );

    expect(error).toBeInstanceOf(InternalServerError);
    expect(w.requests()).toHaveLength(1);
    expect(w.requests()[0]?.headers['content-type']).toBe('application/x-ndjson');
  });
});

describe('per-call options', () => {
  const w = useWorld('msw');

  test('extra headers go on the wire with the call', async () => {
    await w.client.conversations.retrieve(w.conversationId, { headers: { 'x-trace-id': 'trace-1' } });

    expect(w.requests()[0]?.headers['x-trace-id']).toBe('trace-1');
  });

  test('an already aborted signal rejects with RequestAbortedError and sends nothing', async () => {
    const error = await rejectionOf(
      w.client.messages.send(
        w.conversationId,
        { text: 'hi' },
        { signal: AbortSignal.abort(new Error('stop')) },
      ),
    );

    expect(error).toBeInstanceOf(RequestAbortedError);
    expect(w.fetched).toEqual([]);
  });

  test('an abort while waiting for the answer rejects with RequestAbortedError', async () => {
    w.mock.faults.inject({ path: '/v1/conversations/*', fault: 'delay', delay_ms: 3000 });
    const controller = new AbortController();
    const client = new AgentClient({ apiKey: w.apiKey, baseUrl: w.baseUrl });
    // Abort once the mock has the request (it then holds it for 3 s, far longer than a loaded
    // machine takes to see it arrive).
    void (async () => {
      while (w.requests().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort();
    })();

    const error = await rejectionOf(
      client.conversations.retrieve(w.conversationId, { signal: controller.signal }),
    );

    expect(error).toBeInstanceOf(RequestAbortedError);
    expect(w.requests()).toHaveLength(1);
  });
});

describe('ApiPromise', () => {
  const w = useWorld('msw');

  test('is a Promise whose then, catch and finally follow the parsed result', async () => {
    const pending = w.client.conversations.retrieve(w.conversationId);
    let settled = false;

    expect(pending).toBeInstanceOf(Promise);
    const id = await pending.then((answer) => answer.conversation.id).finally(() => (settled = true));
    const caught = await w.client.conversations.retrieve('cnv_missing').catch((error: unknown) => error);

    expect(id).toBe(w.conversationId);
    expect(settled).toBe(true);
    expect(caught).toBeInstanceOf(NotFoundError);
  });

  test('sends once however often it is read', async () => {
    const pending = w.client.conversations.retrieve(w.conversationId);

    const [data, withResponse] = await Promise.all([pending, pending.withResponse()]);
    await pending;

    expect(withResponse.data).toEqual(data);
    expect(w.requests()).toHaveLength(1);
  });
});
