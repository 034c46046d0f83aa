import { ConnectionError } from 'agent-messaging';
import { afterAll, beforeAll, expect, it } from 'vitest';
// Private: a MessageStream over a body made here (a user gets one from messages.stream).
import { MessageStream } from '../../src/streaming/message-stream.js';
import { startWorld, type World } from './harness.js';
import { bodyOf, splitAt } from './helpers.js';

let world: World;
beforeAll(async () => {
  // The loopback door: a cut stream destroys a real connection.
  world = await startWorld('loopback');
});
afterAll(() => world?.close());

/** The raw bytes of a streaming answer from the mock (in-process), fed by appends with multi-byte text. */
async function recordFromMock(): Promise<Uint8Array> {
  const response = await world.mock.fetch(`/v1/conversations/${world.conversationId}/messages?stream=true`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${world.apiKey}`,
      'content-type': 'application/json',
      'idempotency-key': `record-${Date.now()}`,
    },
    body: JSON.stringify({ schema: 'svc.agent-send.v1', content: [], stream: true }),
  });
  const reader = response.body!.getReader();
  const chunks: Uint8Array[] = [];
  const first = await reader.read();
  chunks.push(first.value!);
  const started = JSON.parse(new TextDecoder().decode(first.value!).split('data: ')[1]!) as {
    message: { id: string; content: { id: string }[] };
  };
  const { id } = started.message;
  const blockId = started.message.content[0]!.id;
  for (const value of ['Grüße ', '世界 ', '🎉 done']) {
    await world.client.messages.append(id, blockId, { path: '/text', value });
  }
  await world.client.messages.complete(id, { status: 'sent' });
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    chunks.push(next.value);
  }
  const bytes = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

async function eventsOf(chunks: Uint8Array[]) {
  const events: unknown[] = [];
  for await (const event of new MessageStream(bodyOf(chunks).body)) events.push(event);
  return events;
}

it('reads a stream recorded from the mock identically when split at every byte boundary', async () => {
  const bytes = await recordFromMock();
  const whole = await eventsOf([bytes]);
  expect(whole).toHaveLength(5);
  const stream = new MessageStream(bodyOf([bytes]).body);
  expect(await stream.finalText()).toBe('Grüße 世界 🎉 done');
  for (let at = 1; at < bytes.length; at++) {
    expect(await eventsOf(splitAt(bytes, [at])), `split at byte ${at}`).toEqual(whole);
  }
});

it('throws a ConnectionError when the service cuts the stream mid-message', async () => {
  world.mock.faults.inject({
    method: 'POST',
    path: '/v1/conversations/*/messages',
    fault: 'cut_stream',
    after_events: 1,
  });
  const stream = await world.client.messages.stream(world.conversationId);
  const seen: string[] = [];
  const error = await (async () => {
    for await (const event of stream) seen.push(event.type);
  })().catch((thrown: unknown) => thrown);
  expect(seen).toEqual(['message.started']);
  expect(error).toBeInstanceOf(ConnectionError);
  expect((await stream.finalMessage()).completed).toBe(false);
});
