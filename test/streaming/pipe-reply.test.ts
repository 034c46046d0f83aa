import { ConflictError, RequestAbortedError, ValidationError } from 'agent-messaging';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentMessages,
  type Door,
  pieces,
  requestsSince,
  startWorld,
  textOf,
  type World,
} from './harness.js';

async function* tokens(parts: readonly string[], failAfter?: number) {
  for (const [index, part] of parts.entries()) {
    if (index === failAfter) throw new Error('the model stopped');
    yield part;
  }
}

describe.each<Door>(['loopback', 'msw'])('messages.reply (%s door)', (door) => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld(door);
  });
  afterAll(() => world?.close());

  it('pipes a token stream into one completed reply to the user message', async () => {
    const { message: question } = world.mock.postUserMessage(world.conversationId, {
      user_id: world.userId,
      text: 'Tell me a story',
    });
    const parts = pieces(300);
    const result = await world.client.messages.reply(world.conversationId, tokens(parts), {
      replyToMessageId: question.id,
    });
    const message = (await agentMessages(world)).at(-1)!;
    expect(message).toMatchObject({
      id: result.message_id,
      status: 'sent',
      reply_to: { message_id: question.id },
    });
    expect(textOf(message)).toBe(parts.join(''));
    expect(result.text).toBe(parts.join(''));
  });

  it('completes what was written with the interrupted note and rethrows when the source throws', async () => {
    const parts = pieces(50);
    const error = await world.client.messages
      .reply(world.conversationId, tokens(parts, 20))
      .catch((thrown: unknown) => thrown);
    expect((error as Error).message).toBe('the model stopped');
    const message = (await agentMessages(world)).at(-1)!;
    expect(message.status).toBe('sent');
    expect(textOf(message)).toBe(`${parts.slice(0, 20).join('')}… [interrupted]`);
  });

  it('with the same eventId twice makes one message and does not double its text', async () => {
    const first = await world.client.messages.reply(world.conversationId, ['Hi ', 'there'], {
      eventId: `evt_${door}`,
    });
    const count = (await agentMessages(world)).length;
    const second = await world.client.messages.reply(world.conversationId, ['Hi ', 'there'], {
      eventId: `evt_${door}`,
    });
    expect(second.message_id).toBe(first.message_id);
    const messages = await agentMessages(world);
    expect(messages).toHaveLength(count);
    expect(textOf(messages.at(-1)!)).toBe('Hi there');
  });

  it('answers the completed first reply to a second one with the same eventId, even when its text differs, and sends no text', async () => {
    const eventId = `evt_differs_${door}`;
    const first = await world.client.messages.reply(world.conversationId, ['Yes'], { eventId });
    const before = world.mock.requests.length;
    const second = await world.client.messages.reply(world.conversationId, ['No, ', 'maybe'], { eventId });
    expect(first.outcome).toBe('complete');
    expect(second).toEqual({ ...first, outcome: 'replayed' });
    expect(second).toMatchObject({ status: 'sent', text: 'Yes' });
    const requests = requestsSince(world, before);
    const starts = requests.filter((entry) => entry.query.stream === 'true');
    expect(starts).toHaveLength(1);
    expect(requests.filter((entry) => /\/(append|complete)$/.test(entry.path))).toEqual([]);
    const message = (await agentMessages(world)).at(-1)!;
    expect(message).toMatchObject({ id: first.message_id, status: 'sent', revision: first.revision });
    expect(textOf(message)).toBe('Yes');
  });

  it('makes a second writer of the same eventId fail with a ConflictError while the first still streams', async () => {
    const eventId = `evt_streaming_${door}`;
    const first = await world.client.messages.startReply(
      world.conversationId,
      {},
      { eventId, coalesce: { ms: 1 } },
    );
    await first.write('Yes');
    const before = world.mock.requests.length;
    const error = await world.client.messages
      .startReply(world.conversationId, {}, { eventId, writerWaitMs: 30 })
      .catch((thrown: unknown) => thrown);
    expect(ConflictError.is(error) && error.code).toBe('reply_in_progress');
    // The second writer sent nothing: no start, no append.
    expect(requestsSince(world, before).filter((entry) => entry.method === 'POST')).toEqual([]);
    expect(await first.complete()).toMatchObject({ text: 'Yes', outcome: 'complete' });
  });

  it('makes a second writer of the same eventId wait for the first and answer its reply, replayed', async () => {
    const eventId = `evt_wait_${door}`;
    const first = await world.client.messages.startReply(world.conversationId, {}, { eventId });
    await first.write('The first answer');
    const second = world.client.messages.reply(world.conversationId, ['The second', ' answer'], { eventId });
    const firstResult = await first.complete();
    const secondResult = await second;
    expect(secondResult).toEqual({ ...firstResult, outcome: 'replayed' });
    const message = (await agentMessages(world)).at(-1)!;
    expect(message).toMatchObject({ id: first.messageId, status: 'sent' });
    expect(textOf(message)).toBe('The first answer');
  });
});

describe('a reply that is aborted or given bad input', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld('loopback');
  });
  afterAll(() => world?.close());

  it('stops at the abort with RequestAbortedError and leaves the message streaming', async () => {
    const controller = new AbortController();
    const reply = await world.client.messages.startReply(
      world.conversationId,
      {},
      { signal: controller.signal },
    );
    await reply.write('partial');
    controller.abort();
    await expect(reply.write(' more')).rejects.toBeInstanceOf(RequestAbortedError);
    await expect(reply.complete()).rejects.toBeInstanceOf(RequestAbortedError);
    expect((await agentMessages(world)).at(-1)).toMatchObject({ id: reply.messageId, status: 'streaming' });
  });

  it.each([
    ['conversationId', () => world.client.messages.startReply('conv_1')],
    [
      'transport',
      () => world.client.messages.startReply(world.conversationId, {}, { transport: 'sideways' as 'auto' }),
    ],
    [
      'replyToMessageId',
      () => world.client.messages.startReply(world.conversationId, { replyToMessageId: 'm1' }),
    ],
    [
      'coalesce.chars',
      () => world.client.messages.startReply(world.conversationId, {}, { coalesce: { chars: 0 } }),
    ],
    ['idleTimeoutMs', () => world.client.messages.stream(world.conversationId, {}, { idleTimeoutMs: -5 })],
    [
      'idempotencyKey',
      () => world.client.messages.stream(world.conversationId, {}, { idempotencyKey: 'short' }),
    ],
    ['chunks', () => world.client.messages.reply(world.conversationId, 'not chunks' as unknown as string[])],
    ['body', () => world.client.messages.startReply(world.conversationId, [] as never)],
    ['body', () => world.client.messages.startReply(world.conversationId, 'Hello' as never)],
    ['body', () => world.client.messages.stream(world.conversationId, null as never)],
  ])('names %s in a ValidationError and sends nothing', async (field, call) => {
    const before = world.mock.requests.length;
    const error = await call().catch((thrown: unknown) => thrown);
    expect(ValidationError.is(error) && error.field).toBe(field);
    expect(world.mock.requests).toHaveLength(before);
  });

  it('names text in a ValidationError for a non-string write or one past the message limit', async () => {
    const reply = await world.client.messages.startReply(world.conversationId);
    const notText = await reply.write(42 as unknown as string).catch((thrown: unknown) => thrown);
    expect(ValidationError.is(notText) && notText.field).toBe('text');
    await reply.write('x'.repeat(31_999));
    const tooLong = await reply.write('yz').catch((thrown: unknown) => thrown);
    expect(ValidationError.is(tooLong) && tooLong.message).toMatch(/longer than 32000 characters/);
    const result = await reply.complete();
    expect(result.text).toHaveLength(31_999);
  });

  it("refuses transport 'stream' on a runtime without streamed bodies before sending", async () => {
    const before = world.mock.requests.length;
    const error = await world.client.messages
      .startReply(world.conversationId, {}, { transport: 'stream', streamedBodies: false })
      .catch((thrown: unknown) => thrown);
    expect(ValidationError.is(error) && error.field).toBe('transport');
    expect(world.mock.requests).toHaveLength(before);
  });
});
