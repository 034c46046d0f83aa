import { NotFoundError } from 'agent-messaging';
import { describe, expect, test } from 'vitest';
import { bodyOf, rejectionOf, useWorld, type World } from './world.js';

const w = useWorld('loopback');

function postMany(world: World, count: number) {
  for (let i = 1; i <= count; i++) {
    world.mock.postUserMessage(world.conversationId, { user_id: world.userId, text: `message ${i}` });
  }
}

describe('conversations.retrieve', () => {
  test('reads the conversation in the agent read shape with a plain GET', async () => {
    const { conversation } = await w.client.conversations.retrieve(w.conversationId);

    expect(conversation).toMatchObject({ id: w.conversationId, counterpart_user: { id: w.userId } });
    expect(conversation.participant_count).toBe(2);
    const [sent] = w.requests();
    expect(sent).toMatchObject({
      method: 'GET',
      path: `/v1/conversations/${w.conversationId}`,
      body: null,
      query: {},
    });
    expect(sent?.headers['idempotency-key']).toBeUndefined();
    expect(sent?.headers.authorization).toBe('Bearer ***');
  });

  test('an unknown conversation is a NotFoundError', async () => {
    const error = await rejectionOf(w.client.conversations.retrieve('cnv_unknown'));

    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('conversations.listMessages', () => {
  test('returns one page, newest first, sending limit and before_sequence as query parameters', async () => {
    postMany(w, 5);

    const { messages } = await w.client.conversations.listMessages(w.conversationId, {
      limit: 2,
      before_sequence: 4,
    });

    expect(messages.map((message) => message.sequence)).toEqual([3, 2]);
    expect(messages[0]?.parts?.[0]).toMatchObject({ part_index: 0, type: 'text', text: 'message 3' });
    expect(w.requests()[0]).toMatchObject({
      method: 'GET',
      path: `/v1/conversations/${w.conversationId}/messages`,
      query: { limit: '2', before_sequence: '4' },
    });
  });

  test('sends no query parameters when none are given', async () => {
    await w.client.conversations.listMessages(w.conversationId);

    expect(w.requests()[0]?.query).toEqual({});
  });
});

describe('conversations.history', () => {
  test('iterates every message newest first, paging backwards with before_sequence', async () => {
    postMany(w, 5);

    const sequences: number[] = [];
    for await (const message of w.client.conversations.history(w.conversationId, { limit: 2 })) {
      sequences.push(message.sequence);
    }

    expect(sequences).toEqual([5, 4, 3, 2, 1]);
    expect(w.requests().map((entry) => entry.query)).toEqual([
      { limit: '2' },
      { limit: '2', before_sequence: '4' },
      { limit: '2', before_sequence: '2' },
    ]);
  });

  test('stops after the page that reaches sequence 1, without asking for an empty page', async () => {
    postMany(w, 4);

    const sequences: number[] = [];
    for await (const message of w.client.conversations.history(w.conversationId, { limit: 2 })) {
      sequences.push(message.sequence);
    }

    expect(sequences).toEqual([4, 3, 2, 1]);
    expect(w.requests()).toHaveLength(2);
  });

  test('asks for pages of 100 by default', async () => {
    postMany(w, 3);

    const all = [];
    for await (const message of w.client.conversations.history(w.conversationId)) all.push(message);

    expect(all).toHaveLength(3);
    expect(w.requests().map((entry) => entry.query)).toEqual([{ limit: '100' }]);
  });

  test('leaving the loop early fetches no further page', async () => {
    postMany(w, 5);

    for await (const message of w.client.conversations.history(w.conversationId, { limit: 2 })) {
      expect(message.sequence).toBe(5);
      break;
    }

    expect(w.requests()).toHaveLength(1);
  });
});

describe('conversations.typing, conversations.sendReceipt, conversations.markRead', () => {
  test('typing start answers when the indicator expires', async () => {
    const typing = await w.client.conversations.typing(w.conversationId, { state: 'start' });

    expect(typing).toMatchObject({ conversation_id: w.conversationId, state: 'start' });
    expect(Date.parse(typing.expires_at)).toBeGreaterThan(w.mock.clock.now().getTime());
    expect(w.requests()[0]).toMatchObject({
      method: 'POST',
      path: `/v1/conversations/${w.conversationId}/typing`,
    });
    expect(bodyOf(w.requests()[0])).toEqual({ state: 'start' });
  });

  test("sendReceipt records delivery of a user's message, in snake_case", async () => {
    const { message } = w.mock.postUserMessage(w.conversationId, { user_id: w.userId, text: 'ping' });

    const receipt = await w.client.conversations.sendReceipt(w.conversationId, {
      message_id: message.id,
      type: 'delivered',
    });

    expect(receipt).toMatchObject({ message_id: message.id, type: 'delivered' });
    expect(w.requests()[0]?.path).toBe(`/v1/conversations/${w.conversationId}/receipts`);
    expect(bodyOf(w.requests()[0])).toEqual({ message_id: message.id, type: 'delivered' });
  });

  test("markRead marks a user's message read", async () => {
    const { message } = w.mock.postUserMessage(w.conversationId, { user_id: w.userId, text: 'ping' });

    const read = await w.client.conversations.markRead(w.conversationId, { message_id: message.id });

    expect(read).toMatchObject({ message_id: message.id, type: 'read' });
    expect(w.requests()[0]?.path).toBe(`/v1/conversations/${w.conversationId}/read`);
    expect(bodyOf(w.requests()[0])).toEqual({ message_id: message.id });
    const { messages } = await w.client.conversations.listMessages(w.conversationId, { limit: 1 });
    expect(messages[0]?.read_at).toBe(read.at);
  });
});
