import { ApiError } from 'agent-messaging';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  agentMessages,
  type Door,
  pieces,
  requestsSince,
  startWorld,
  textOf,
  type World,
} from './harness.js';

/** A world behind the door for the describe that calls this; faults are cleared after each test. */
function useWorld(door: Door): () => World {
  let world: World | undefined;
  beforeAll(async () => {
    world = await startWorld(door);
  });
  afterEach(() => world?.mock.faults.clear());
  afterAll(() => world?.close());
  return () => {
    if (!world) throw new Error('the world is not started yet');
    return world;
  };
}

const START = '/v1/conversations/*/messages';
// About 5,000 characters: at least five patch events even when backpressure makes batches large.
const written = pieces(1_000);
const text = written.join('');

async function writeAll(world: World, options: Parameters<World['client']['messages']['startReply']>[2]) {
  const before = world.mock.requests.length;
  const countBefore = (await agentMessages(world)).length;
  const reply = await world.client.messages.startReply(world.conversationId, {}, options);
  for (const piece of written) await reply.write(piece);
  const result = await reply.complete();
  const messages = await agentMessages(world);
  return { reply, result, requests: requestsSince(world, before), created: messages.slice(countBefore) };
}

describe.each<Door>(['loopback', 'msw'])('a stream cut mid-reply (%s door)', (door) => {
  const worldOf = useWorld(door);

  it.each([1, 2, 3, 5])(
    'after %i events is recovered through append with exactly the written text',
    async (afterEvents) => {
      const world = worldOf();
      world.mock.faults.inject({
        method: 'POST',
        path: START,
        fault: 'cut_stream',
        after_events: afterEvents,
      });
      const { reply, result, requests, created } = await writeAll(world, { transport: 'stream' });
      expect(reply.transport).toBe('append');
      expect(created).toHaveLength(1);
      expect(created[0]).toMatchObject({ id: result.message_id, status: 'sent', revision: result.revision });
      expect(textOf(created[0]!)).toBe(text);
      expect(result.text).toBe(text);
      // The cut came after message.started, so the start itself was not retried...
      expect(requests.filter((entry) => entry.query.stream === 'true')).toHaveLength(1);
      // ...and the writer read the message back to learn what was applied.
      expect(requests.some((entry) => entry.method === 'GET' && entry.path.endsWith('/messages'))).toBe(true);
    },
  );

  it('before message.started is retried with the same key and gives one message', async () => {
    const world = worldOf();
    world.mock.faults.inject({ method: 'POST', path: START, fault: 'cut_stream', after_events: 0 });
    const { result, requests, created } = await writeAll(world, { transport: 'append' });
    const starts = requests.filter((entry) => entry.query.stream === 'true');
    expect(starts).toHaveLength(2);
    expect(starts[1]!.headers['idempotency-key']).toBe(starts[0]!.headers['idempotency-key']);
    expect(created.map((message) => message.id)).toEqual([result.message_id]);
    expect(textOf(created[0]!)).toBe(text);
  });
});

describe('a service that refuses streamed bodies', () => {
  const worldOf = useWorld('loopback');

  it('makes auto fall back to append without losing or doubling text', async () => {
    const world = worldOf();
    world.mock.faults.inject({ method: 'POST', path: START, fault: 'refuse_streamed_body' });
    const { reply, requests, created } = await writeAll(world, { transport: 'auto' });
    expect(reply.transport).toBe('append');
    const starts = requests.filter((entry) => entry.query.stream === 'true');
    expect(starts.map((entry) => entry.headers['content-type'])).toEqual([
      'application/x-ndjson',
      'application/json',
    ]);
    expect(created).toHaveLength(1);
    expect(textOf(created[0]!)).toBe(text);
  });

  it('makes an explicit stream transport fail with the 415, creating nothing', async () => {
    const world = worldOf();
    world.mock.faults.inject({ method: 'POST', path: START, fault: 'refuse_streamed_body' });
    const before = (await agentMessages(world)).length;
    const error = await world.client.messages
      .startReply(world.conversationId, {}, { transport: 'stream' })
      .catch((thrown: unknown) => thrown);
    expect(ApiError.is(error) && error.status === 415 && error.code === 'streaming_unsupported').toBe(true);
    expect(await agentMessages(world)).toHaveLength(before);
  });
});

describe('an answer lost after the service committed it', () => {
  const worldOf = useWorld('loopback');

  it.each(['stream', 'append'] as const)(
    'on the start (%s transport) is retried without a second message',
    async (transport) => {
      const world = worldOf();
      world.mock.faults.inject({ method: 'POST', path: START, fault: 'drop_after_commit' });
      const { result, requests, created } = await writeAll(world, { transport });
      const starts = requests.filter((entry) => entry.query.stream === 'true');
      expect(starts.length).toBeGreaterThanOrEqual(2);
      expect(new Set(starts.map((entry) => entry.headers['idempotency-key'])).size).toBe(1);
      expect(created.map((message) => message.id)).toEqual([result.message_id]);
      expect(textOf(created[0]!)).toBe(text);
    },
  );

  it('on an append is read back instead of sent twice', async () => {
    const world = worldOf();
    world.mock.faults.inject({
      method: 'POST',
      path: '/v1/messages/*/blocks/*/append',
      fault: 'drop_after_commit',
      times: 2,
    });
    const { created, result } = await writeAll(world, { transport: 'append' });
    expect(textOf(created[0]!)).toBe(text);
    expect(created[0]!.revision).toBe(result.revision);
  });

  it('on the complete call still answers the completed message', async () => {
    const world = worldOf();
    world.mock.faults.inject({ method: 'POST', path: '/v1/messages/*/complete', fault: 'drop_after_commit' });
    const { created, result } = await writeAll(world, { transport: 'append' });
    expect(result.status).toBe('sent');
    expect(created[0]).toMatchObject({ status: 'sent', revision: result.revision });
    expect(textOf(created[0]!)).toBe(text);
  });

  it('on an append answered 503 is retried after reading the message back', async () => {
    const world = worldOf();
    world.mock.faults.inject({
      method: 'POST',
      path: '/v1/messages/*/blocks/*/append',
      fault: 'status',
      status: 503,
      retry_after: 0,
    });
    const { created } = await writeAll(world, { transport: 'append' });
    expect(textOf(created[0]!)).toBe(text);
  });
});
