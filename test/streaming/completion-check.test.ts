// Issue 23, item 3: a reply never reports `complete` for a message whose text is not what it wrote.
// Another writer's change lands on the message just before this writer's completion (the test plays
// that writer through the same endpoints, from inside the client's `fetch`, as the completion goes
// out): the note of a reply ended marked, and for the stream, that writer's completion too. The
// stream then shows a completion that looks like this writer's, and the append endpoint answers a
// completion; the writer must find out either way and throw ReplyMismatchError.
import { AgentClient, ReplyMismatchError, type ReplyTransport } from 'agent-messaging';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentMessages, startWorld, textOf, type World } from './harness.js';

const NOTE = ' … [interrupted]';

/**
 * A `fetch` that runs `interloper` before this client's completion reaches the service: before the
 * completion line of a Streamable HTTP body, or before the request of the complete endpoint.
 */
function fetchWithInterloper(interloper: () => Promise<void>) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    if (request.method === 'POST' && new URL(request.url).pathname.endsWith('/complete')) {
      await interloper();
      return fetch(request);
    }
    if (!request.headers.get('content-type')?.startsWith('application/x-ndjson') || request.body === null) {
      return fetch(request);
    }
    const decoder = new TextDecoder();
    const lines = request.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        async transform(chunk, controller) {
          if (decoder.decode(chunk, { stream: true }).includes('"type":"message.completed"'))
            await interloper();
          controller.enqueue(chunk);
        },
      }),
    );
    return fetch(new Request(request, { body: lines, duplex: 'half' } as RequestInit));
  };
}

describe.each<ReplyTransport>(['stream', 'append'])('a reply’s completion (%s)', (transport) => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld('loopback');
  });
  afterAll(() => world?.close());

  it.each([
    ['another writer’s note landed before it', false],
    ['another writer ended the message marked before it', true],
  ])('throws ReplyMismatchError when %s, never outcome complete', async (_, completes) => {
    let target: { messageId: string; blockId: string } | undefined;
    const interloper = async () => {
      if (target === undefined) return;
      const { messageId, blockId } = target;
      target = undefined;
      await world.client.messages.append(messageId, blockId, { path: '/text', value: NOTE });
      if (completes) await world.client.messages.complete(messageId, { status: 'sent' });
    };
    const client = new AgentClient({
      apiKey: world.apiKey,
      baseUrl: world.baseUrl,
      fetch: fetchWithInterloper(interloper),
    });
    const writer = await client.messages.startReply(
      world.conversationId,
      {},
      { transport, coalesce: { ms: 1 } },
    );
    await writer.write('Half an answer');
    await expect.poll(async () => textOf((await agentMessages(world)).at(-1)!)).toBe('Half an answer');
    target = { messageId: writer.messageId, blockId: writer.blockId };

    const failure = await writer.complete().catch((thrown: unknown) => thrown);
    expect(ReplyMismatchError.is(failure)).toBe(true);
    const message = (await agentMessages(world)).at(-1)!;
    expect([message.id, message.status, textOf(message)]).toEqual([
      writer.messageId,
      'sent',
      `Half an answer${NOTE}`,
    ]);
  });

  it('answers outcome complete when the message holds exactly what was written', async () => {
    const writer = await world.client.messages.startReply(world.conversationId, {}, { transport });
    await writer.write('A whole answer.');
    expect(await writer.complete()).toMatchObject({ outcome: 'complete', text: 'A whole answer.' });
    expect(textOf((await agentMessages(world)).at(-1)!)).toBe('A whole answer.');
  });
});
