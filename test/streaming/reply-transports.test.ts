import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentMessages, pieces, requestsSince, startWorld, textOf, type World } from './harness.js';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world?.close());

const written = pieces(1_000);
const text = written.join('');
const isStart = (entry: { method: string; path: string; query: Record<string, string> }) =>
  entry.method === 'POST' && entry.path.endsWith('/messages') && entry.query.stream === 'true';

/** Writes the 1,000 pieces through a reply and answers its result and the requests it made. */
async function replyOf(options: Parameters<World['client']['messages']['startReply']>[2]) {
  const before = world.mock.requests.length;
  const reply = await world.client.messages.startReply(world.conversationId, {}, options);
  for (const piece of written) await reply.write(piece);
  const result = await reply.complete();
  return { reply, result, requests: requestsSince(world, before) };
}

async function lastAgentMessage() {
  const messages = await agentMessages(world);
  return messages.at(-1)!;
}

describe('a reply of 1,000 small writes', () => {
  it('through the stream transport is one NDJSON request and ends with exactly the written text', async () => {
    const { reply, result, requests } = await replyOf({ transport: 'stream' });
    expect(reply.transport).toBe('stream');
    expect(requests).toHaveLength(1);
    expect(isStart(requests[0]!)).toBe(true);
    expect(requests[0]!.headers['content-type']).toBe('application/x-ndjson');
    expect(requests[0]!.headers['idempotency-key']).toBeTruthy();
    const message = await lastAgentMessage();
    expect(message).toMatchObject({ id: result.message_id, status: 'sent', revision: result.revision });
    expect(textOf(message)).toBe(text);
    expect(result).toMatchObject({ status: 'sent', text });
  });

  it('through the append transport makes at most ceil(chars / 256) + 2 requests and ends with exactly the written text', async () => {
    const { reply, result, requests } = await replyOf({ transport: 'append' });
    expect(reply.transport).toBe('append');
    expect(requests.length).toBeLessThanOrEqual(Math.ceil(text.length / 256) + 2);
    expect(requests.filter(isStart)).toHaveLength(1);
    expect(requests[0]!.headers['content-type']).toBe('application/json');
    const appends = requests.filter((entry) => entry.path.endsWith('/append'));
    const appended = appends.map((entry) => (JSON.parse(entry.body ?? '{}') as { value: string }).value);
    expect(appended.join('')).toBe(text);
    expect(requests.at(-1)!.path).toBe(`/v1/messages/${result.message_id}/complete`);
    const message = await lastAgentMessage();
    expect(message).toMatchObject({ id: result.message_id, status: 'sent', revision: appends.length });
    expect(result.revision).toBe(appends.length);
    expect(textOf(message)).toBe(text);
  });

  it('through auto streams when the runtime can send a streamed body', async () => {
    const { reply, requests } = await replyOf({});
    expect(reply.transport).toBe('stream');
    expect(requests).toHaveLength(1);
    expect(textOf(await lastAgentMessage())).toBe(text);
  });

  it('through auto on a runtime without streamed bodies uses append, never sending NDJSON', async () => {
    const { reply, requests } = await replyOf({ streamedBodies: false });
    expect(reply.transport).toBe('append');
    expect(requests.some((entry) => entry.headers['content-type'] === 'application/x-ndjson')).toBe(false);
    expect(requests.length).toBeLessThanOrEqual(Math.ceil(text.length / 256) + 2);
    expect(textOf(await lastAgentMessage())).toBe(text);
  });
});

describe('completing a reply', () => {
  it('uses the written text as fallback text unless one is given', async () => {
    const reply = await world.client.messages.startReply(world.conversationId);
    await reply.write('Hello, world');
    await reply.complete({ fallbackText: 'Greeting' });
    const message = await lastAgentMessage();
    expect(message.fallback_text).toBe('Greeting');
    const plain = await world.client.messages.startReply(world.conversationId, {}, { transport: 'append' });
    await plain.write('Plain words');
    await plain.complete();
    expect((await lastAgentMessage()).fallback_text).toBe('Plain words');
  });

  it('answers the same result to a second complete() and refuses writes after it', async () => {
    const reply = await world.client.messages.startReply(world.conversationId);
    await reply.write('once');
    const first = await reply.complete();
    expect(await reply.complete()).toEqual(first);
    await expect(reply.write('more')).rejects.toThrow(/already completed/);
  });

  it('sends a small write after the coalescing interval without waiting for complete()', async () => {
    const reply = await world.client.messages.startReply(world.conversationId, {}, { coalesce: { ms: 20 } });
    await reply.write('tick');
    await expect.poll(async () => textOf(await lastAgentMessage()), { timeout: 5_000 }).toBe('tick');
    await reply.complete();
  });

  it('writes after the initial text of a text block given at the start', async () => {
    const content = [{ type: 'text' as const, text: 'Answer: ' }];
    const reply = await world.client.messages.startReply(world.conversationId, { content });
    await reply.write('42');
    const result = await reply.complete();
    expect(result.text).toBe('Answer: 42');
    expect(textOf(await lastAgentMessage())).toBe('Answer: 42');
  });
});
