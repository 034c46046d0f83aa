import { AgentClient, RequestAbortedError, type StreamEvent } from 'agent-messaging';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentMessages, type Door, startWorld, type World } from './harness.js';

/** A fetch that records when the SDK cancels an event-stream body, which closes its connection. */
function cancelSpy() {
  const cancelled: string[] = [];
  const fetch = async (input: string | Request | URL, init?: RequestInit) => {
    const response = await globalThis.fetch(input, init);
    if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream'))
      return response;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await reader.read();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel(reason) {
        cancelled.push(new URL(input instanceof Request ? input.url : input).pathname);
        await reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return { cancelled, fetch };
}

describe.each<Door>(['loopback', 'msw'])('reading a stream (%s door)', (door) => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld(door);
  });
  afterAll(() => world?.close());

  it('yields started, one patch per applied append, and completed, and builds the final text', async () => {
    const before = world.mock.requests.length;
    const stream = await world.client.messages.stream(world.conversationId, { metadata: { run: 'r1' } });
    const events: StreamEvent[] = [];
    let feeding: Promise<unknown> | undefined;
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'message.started') {
        const [block] = event.message.content;
        const { messages } = world.client;
        feeding = (async () => {
          await messages.append(event.message.id, block!.id, { path: '/text', value: 'Hello' });
          await messages.append(event.message.id, block!.id, { path: '/text', value: ', wörld 🌍' });
          await messages.complete(event.message.id, { status: 'sent' });
        })();
      }
    }
    await feeding;
    expect(events.map((event) => [event.type, event.seq])).toEqual([
      ['message.started', 1],
      ['message.patch', 2],
      ['message.patch', 3],
      ['message.completed', 4],
    ]);
    expect(await stream.finalText()).toBe('Hello, wörld 🌍');
    expect((await stream.finalMessage()).completed).toBe(true);
    const [start] = world.mock.requests.slice(before);
    expect(start).toMatchObject({ method: 'POST', query: { stream: 'true' } });
    expect(start!.headers.accept).toBe('text/event-stream');
    expect(start!.headers['idempotency-key']).toMatch(/^[\x21-\x7e]{8,255}$/);
    expect(JSON.parse(start!.body!)).toEqual({
      schema: 'svc.agent-send.v1',
      content: [],
      metadata: { run: 'r1' },
      stream: true,
    });
  });

  it('replays the same message for a second start with the same idempotency key', async () => {
    const options = { idempotencyKey: `stream-replay-${door}` };
    const first = await world.client.messages.stream(world.conversationId, {}, options);
    const iterator = first[Symbol.asyncIterator]();
    const started = (await iterator.next()).value as StreamEvent & { type: 'message.started' };
    await iterator.return?.();
    const count = (await agentMessages(world)).length;
    const again = await world.client.messages.stream(world.conversationId, {}, options);
    const replayed = (await again[Symbol.asyncIterator]().next()).value as StreamEvent & {
      type: 'message.started';
    };
    expect(replayed.message).toEqual(started.message);
    expect(await agentMessages(world)).toHaveLength(count);
  });
});

describe('closing a stream', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld('loopback');
  });
  afterAll(() => world?.close());

  it('break cancels the body, closing the connection, and leaves the message streaming', async () => {
    const spy = cancelSpy();
    const client = new AgentClient({ apiKey: world.apiKey, baseUrl: world.baseUrl, fetch: spy.fetch });
    const stream = await client.messages.stream(world.conversationId);
    let messageId = '';
    let blockId = '';
    for await (const event of stream) {
      if (event.type === 'message.started') {
        messageId = event.message.id;
        blockId = event.message.content[0]!.id;
        break;
      }
    }
    expect(spy.cancelled).toEqual([`/v1/conversations/${world.conversationId}/messages`]);
    const stored = (await agentMessages(world)).find((message) => message.id === messageId);
    expect(stored?.status).toBe('streaming');
    // The service changed nothing: the message still takes appends and completes.
    await client.messages.append(messageId, blockId, { path: '/text', value: 'later' });
    expect(await client.messages.complete(messageId, { status: 'sent' })).toMatchObject({ revision: 1 });
  });

  it('aborting the signal mid-stream rejects with RequestAbortedError and closes the connection', async () => {
    const spy = cancelSpy();
    const client = new AgentClient({ apiKey: world.apiKey, baseUrl: world.baseUrl, fetch: spy.fetch });
    const controller = new AbortController();
    const stream = await client.messages.stream(world.conversationId, {}, { signal: controller.signal });
    const error = await (async () => {
      for await (const event of stream) if (event.type === 'message.started') controller.abort();
    })().catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RequestAbortedError);
    expect(spy.cancelled).toHaveLength(1);
    expect((await agentMessages(world)).at(-1)?.status).toBe('streaming');
  });
});
