import { ConflictError, NotFoundError, PermissionDeniedError } from 'agent-messaging';
import { describe, expect, test } from 'vitest';
import { bodyOf, rejectionOf, useWorld, type World } from './world.js';

const w = useWorld('msw');

/** Starts a streaming message and leaves its stream after `message.started`. */
async function streamingMessage(world: World) {
  const stream = await world.client.messages.stream(world.conversationId);
  for await (const event of stream) {
    if (event.type === 'message.started') {
      const block = event.message.content[0];
      if (!block) throw new Error('message.started without a block');
      return { messageId: event.message.id, blockId: block.id };
    }
  }
  throw new Error('the stream ended before message.started');
}

describe('messages.send', () => {
  test('sends the text shorthand as one text block with the same fallbackText, camelCase on the wire', async () => {
    const { message } = await w.client.messages.send(w.conversationId, { text: 'Hello there' });

    expect(message).toMatchObject({ conversationId: w.conversationId, status: 'sent' });
    expect(message.id).toMatch(/^msg_/);
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Hello there' })]);
    const [sent] = w.requests();
    expect(sent).toMatchObject({ method: 'POST', path: `/v1/conversations/${w.conversationId}/messages` });
    expect(bodyOf(sent)).toEqual({
      schema: 'svc.agent-send.v1',
      content: [{ type: 'text', text: 'Hello there' }],
      fallbackText: 'Hello there',
    });
    expect(sent?.headers['content-type']).toBe('application/json');
    expect(sent?.headers.authorization).toBe('Bearer ***');
    expect(w.fetched[0]?.headers.get('authorization')).toBe(`Bearer ${w.apiKey}`);
  });

  test('generates an Idempotency-Key per call when none is given', async () => {
    await w.client.messages.send(w.conversationId, { text: 'one' });
    await w.client.messages.send(w.conversationId, { text: 'two' });

    const keys = w.requests().map((entry) => entry.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[\x21-\x7e]{8,255}$/);
    expect(keys[0]).not.toBe(keys[1]);
  });

  test('sends the full send shape as given, with replyToMessageId and metadata', async () => {
    const { message: asked } = w.mock.postUserMessage(w.conversationId, {
      user_id: w.userId,
      text: 'Weather?',
    });
    const content = [
      { type: 'text' as const, text: 'Sunny.' },
      {
        type: 'actions' as const,
        layout: 'quick_replies' as const,
        actions: [
          { actionId: 'more', label: 'More', behavior: { type: 'postback' as const, value: 'more' } },
        ],
      },
    ];
    const { message } = await w.client.messages.send(w.conversationId, {
      content,
      fallbackText: 'Sunny',
      replyToMessageId: asked.id,
      metadata: { runId: 'run_1' },
    });

    expect(message.content.map((block) => block.type)).toEqual(['text', 'actions']);
    expect(bodyOf(w.requests()[0])).toEqual({
      schema: 'svc.agent-send.v1',
      content,
      fallbackText: 'Sunny',
      replyToMessageId: asked.id,
      metadata: { runId: 'run_1' },
    });
    const { messages } = await w.client.conversations.listMessages(w.conversationId, { limit: 1 });
    expect(messages[0]).toMatchObject({
      id: message.id,
      fallback_text: 'Sunny',
      reply_to: { message_id: asked.id },
    });
  });

  test("replays the original message for a repeat with the caller's Idempotency-Key", async () => {
    const first = await w.client.messages.send(
      w.conversationId,
      { text: 'once' },
      { idempotencyKey: 'evt_123:reply' },
    );
    const again = await w.client.messages.send(
      w.conversationId,
      { text: 'once' },
      { idempotencyKey: 'evt_123:reply' },
    );

    expect(again.message.id).toBe(first.message.id);
    expect(w.requests().map((entry) => entry.headers['idempotency-key'])).toEqual([
      'evt_123:reply',
      'evt_123:reply',
    ]);
    const { messages } = await w.client.conversations.listMessages(w.conversationId);
    expect(messages.filter((message) => message.sender.id === w.agentId)).toHaveLength(1);
  });

  test('withResponse gives the HTTP response and its request id along with the data', async () => {
    const { data, response, requestId } = await w.client.messages
      .send(w.conversationId, { text: 'hi' })
      .withResponse();

    expect(response.status).toBe(201);
    expect(requestId).toMatch(/^req_/);
    expect(requestId).toBe(response.headers.get('request-id'));
    expect(data.message.status).toBe('sent');
  });
});

describe('messages.append and messages.complete', () => {
  test('append adds text to a streaming block and complete sends the message, snake_case paths and bodies', async () => {
    const { messageId, blockId } = await streamingMessage(w);
    const from = w.requests().length;

    const appended = await w.client.messages.append(messageId, blockId, { path: '/text', value: 'Hello' });
    const completed = await w.client.messages.complete(messageId, { status: 'sent', fallbackText: 'Hello' });

    expect(appended).toEqual(
      expect.objectContaining({ message_id: messageId, block_id: blockId, revision: 1 }),
    );
    expect(completed).toEqual(
      expect.objectContaining({ message_id: messageId, status: 'sent', revision: 1 }),
    );
    const [append, complete] = w.requests().slice(from);
    expect(append).toMatchObject({
      method: 'POST',
      path: `/v1/messages/${messageId}/blocks/${blockId}/append`,
    });
    expect(bodyOf(append)).toEqual({ path: '/text', value: 'Hello' });
    expect(complete).toMatchObject({ method: 'POST', path: `/v1/messages/${messageId}/complete` });
    expect(bodyOf(complete)).toEqual({ status: 'sent', fallbackText: 'Hello' });
  });

  test('complete of a message that is already sent is a ConflictError with its code', async () => {
    const { message } = await w.client.messages.send(w.conversationId, { text: 'done' });

    const error = await rejectionOf(w.client.messages.complete(message.id, { status: 'sent' }));

    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({
      status: 409,
      code: 'message_not_streaming',
      requestId: expect.stringMatching(/^req_/),
    });
  });
});

describe('messages.unsend', () => {
  test("unsends the agent's own message, leaving a tombstone", async () => {
    const { message } = await w.client.messages.send(w.conversationId, { text: 'oops' });

    const { message: tombstone } = await w.client.messages.unsend(message.id);

    expect(tombstone).toMatchObject({ id: message.id, status: 'deleted', sender: { id: w.agentId } });
    expect(w.requests().at(-1)).toMatchObject({
      method: 'DELETE',
      path: `/v1/messages/${message.id}`,
      body: null,
    });
  });

  test('a user unsends their own message with the user client', async () => {
    const { message } = w.mock.postUserMessage(w.conversationId, { user_id: w.userId, text: 'typo' });

    const { message: tombstone } = await w.user.messages.unsend(message.id);

    expect(tombstone).toMatchObject({ id: message.id, status: 'deleted', sender: { id: w.userId } });
  });

  test("unsending someone else's message is a PermissionDeniedError", async () => {
    const { message } = w.mock.postUserMessage(w.conversationId, { user_id: w.userId, text: 'mine' });

    const error = await rejectionOf(w.client.messages.unsend(message.id));

    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error).toMatchObject({ status: 403, code: 'forbidden' });
  });

  test('unsending after two minutes is a ConflictError', async () => {
    const { message } = await w.client.messages.send(w.conversationId, { text: 'late' });
    await w.mock.clock.advance(121);

    const error = await rejectionOf(w.client.messages.unsend(message.id));

    expect(error).toMatchObject({ status: 409, code: 'unsend_window_elapsed' });
  });
});

describe('messages.react', () => {
  test("adds a reaction to a user's message", async () => {
    const { message } = w.mock.postUserMessage(w.conversationId, { user_id: w.userId, text: 'great news' });

    const reaction = await w.client.messages.react(message.id, { emoji: '👍', action: 'add' });

    expect(reaction).toMatchObject({ message_id: message.id, emoji: '👍', action: 'add' });
    expect(w.requests()[0]).toMatchObject({ method: 'POST', path: `/v1/messages/${message.id}/reactions` });
    expect(bodyOf(w.requests()[0])).toEqual({ emoji: '👍', action: 'add' });
  });

  test('reacting to an unknown message is a NotFoundError', async () => {
    const error = await rejectionOf(w.client.messages.react('msg_unknown', { emoji: '👍', action: 'add' }));

    expect(NotFoundError.is(error)).toBe(true);
    expect(error).toMatchObject({ status: 404, code: 'not_found' });
  });
});
