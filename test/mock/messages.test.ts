import { schemas } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { errorOf, newKey, setupScenario, textSend } from './helpers.js';

// The wire schemas as values, from the public namespace.
const { ListMessagesResponse, SendMessageResponse, UnsendResponse } = schemas;

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, call } = useDoor(door);

  describe('messages.send', () => {
    it('answers 201 with block ids and stores the message in history with the agent as sender', async () => {
      const s = await setupScenario(mock);
      const content = [
        { type: 'text', text: 'Pick one' },
        {
          type: 'actions',
          layout: 'quick_replies',
          actions: [{ actionId: 'a', label: 'A', behavior: { type: 'postback', value: 'a' } }],
        },
      ];
      const answer = await call('POST', `/v1/conversations/${s.conversationId}/messages`, {
        token: s.apiKey,
        idempotencyKey: newKey(),
        body: { schema: 'svc.agent-send.v1', content, metadata: { run_id: 'r1' } },
      });
      expect(answer.status).toBe(201);
      const { message } = SendMessageResponse.parse(answer.body);
      expect(message).toMatchObject({ conversationId: s.conversationId, status: 'sent' });
      expect(message.content.map((block) => block.id)).toEqual([
        expect.stringMatching(/^blk_/),
        expect.stringMatching(/^blk_/),
      ]);
      const history = ListMessagesResponse.parse(
        (await call('GET', `/v1/conversations/${s.conversationId}/messages`, { token: s.apiKey })).body,
      );
      expect(history.messages[0]).toMatchObject({
        id: message.id,
        sequence: 1,
        sender: { id: s.agentId },
        fallback_text: 'Pick one',
        parts: [
          { part_index: 0, type: 'text', text: 'Pick one' },
          { part_index: 1, type: 'actions', actions: content[1]?.actions },
        ],
        status: 'sent',
      });
    });

    it('keeps a client block id and the fallbackText and reply target given', async () => {
      const s = await setupScenario(mock);
      const { message: first } = mock.postUserMessage(s.conversationId, {
        user_id: s.userId,
        text: 'question',
      });
      const answer = await call('POST', `/v1/conversations/${s.conversationId}/messages`, {
        token: s.apiKey,
        idempotencyKey: newKey(),
        body: {
          schema: 'svc.agent-send.v1',
          content: [{ type: 'text', text: 'answer', id: 'blk_mine' }],
          fallbackText: 'plain answer',
          replyToMessageId: first.id,
        },
      });
      expect(SendMessageResponse.parse(answer.body).message.content[0]?.id).toBe('blk_mine');
      const history = ListMessagesResponse.parse(
        (await call('GET', `/v1/conversations/${s.conversationId}/messages`, { token: s.apiKey })).body,
      );
      expect(history.messages[0]).toMatchObject({
        fallback_text: 'plain answer',
        reply_to: { message_id: first.id, part_index: 0 },
      });
    });

    it('answers 400 naming the field for a bad send, before anything is stored', async () => {
      const s = await setupScenario(mock);
      const cases: [unknown, string][] = [
        [{ content: [] }, 'schema'],
        [{ schema: 'svc.agent-send.v1' }, 'content'],
        [{ schema: 'svc.agent-send.v1', content: [{ type: 'video' }] }, 'content[0]'],
        [
          {
            schema: 'svc.agent-send.v1',
            content: Array.from({ length: 51 }, () => ({ type: 'text', text: 'x' })),
          },
          'content',
        ],
        [
          { schema: 'svc.agent-send.v1', content: [{ type: 'text', text: 'x'.repeat(32_001) }] },
          'content[0].text',
        ],
        [{ schema: 'svc.agent-send.v1', content: [], replyToMessageId: 'nope' }, 'replyToMessageId'],
        [{ schema: 'svc.agent-send.v1', content: [], stream: true }, 'stream'],
        [
          { schema: 'svc.agent-send.v1', content: [{ type: 'file', attachmentId: 'att_missing' }] },
          'content[0].attachmentId',
        ],
      ];
      for (const [body, field] of cases) {
        const answer = await call('POST', `/v1/conversations/${s.conversationId}/messages`, {
          token: s.apiKey,
          idempotencyKey: newKey(),
          body,
        });
        expect(answer.status, field).toBe(400);
        expect(errorOf(answer).message, field).toContain(`${field}`);
      }
      const history = ListMessagesResponse.parse(
        (await call('GET', `/v1/conversations/${s.conversationId}/messages`, { token: s.apiKey })).body,
      );
      expect(history.messages).toEqual([]);
    });

    it('answers 400 for a missing or malformed Idempotency-Key', async () => {
      const s = await setupScenario(mock);
      const path = `/v1/conversations/${s.conversationId}/messages`;
      const missing = await call('POST', path, { token: s.apiKey, body: textSend('hi') });
      expect(missing.status).toBe(400);
      expect(errorOf(missing).message).toContain('Idempotency-Key');
      const short = await call('POST', path, {
        token: s.apiKey,
        body: textSend('hi'),
        idempotencyKey: 'short',
      });
      expect(short.status).toBe(400);
      expect(errorOf(short).message).toContain('Idempotency-Key');
    });

    it('answers 413 for a body over 1 MiB', async () => {
      const s = await setupScenario(mock);
      const answer = await call('POST', `/v1/conversations/${s.conversationId}/messages`, {
        token: s.apiKey,
        idempotencyKey: newKey(),
        body: textSend('x'.repeat(1024 * 1024)),
      });
      expect(answer.status).toBe(413);
      expect(errorOf(answer).code).toBe('payload_too_large');
    });
  });

  describe('conversations.listMessages', () => {
    async function withMessages(count: number) {
      const s = await setupScenario(mock);
      for (let i = 1; i <= count; i++)
        mock.postUserMessage(s.conversationId, { user_id: s.userId, text: `m${i}` });
      const page = async (query: string) => {
        const answer = await call('GET', `/v1/conversations/${s.conversationId}/messages${query}`, {
          token: s.apiKey,
        });
        const sequences =
          answer.status === 200
            ? ListMessagesResponse.parse(answer.body).messages.map((m) => m.sequence)
            : [];
        return { answer, sequences };
      };
      return { s, page };
    }

    it('returns newest first, 50 by default, and pages backwards with before_sequence', async () => {
      const { page } = await withMessages(60);
      const first = await page('');
      expect(first.sequences).toHaveLength(50);
      expect(first.sequences[0]).toBe(60);
      expect(first.sequences.at(-1)).toBe(11);
      const second = await page('?limit=50&before_sequence=11');
      expect(second.sequences).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    });

    it('answers 400 for a limit out of 1..100 instead of clamping it', async () => {
      const { page } = await withMessages(1);
      for (const query of ['?limit=0', '?limit=101', '?limit=abc', '?before_sequence=0']) {
        const { answer } = await page(query);
        expect(answer.status, query).toBe(400);
        expect(errorOf(answer).message, query).toMatch(/^(limit|before_sequence):/);
      }
      expect((await page('?limit=100')).answer.status).toBe(200);
    });
  });

  describe('messages.unsend', () => {
    async function agentMessage() {
      const s = await setupScenario(mock);
      const answer = await call('POST', `/v1/conversations/${s.conversationId}/messages`, {
        token: s.apiKey,
        idempotencyKey: newKey(),
        body: textSend('oops'),
      });
      return { s, id: SendMessageResponse.parse(answer.body).message.id };
    }

    it('leaves a tombstone with id, sequence, sender and created_at, and delivers nothing', async () => {
      const { s, id } = await agentMessage();
      await call('POST', `/v1/messages/${id}/reactions`, {
        token: s.apiKey,
        body: { emoji: '👍', action: 'add' },
      });
      const answer = await call('DELETE', `/v1/messages/${id}`, { token: s.apiKey });
      expect(answer.status).toBe(200);
      const { message } = UnsendResponse.parse(answer.body);
      expect(message).toMatchObject({ id, sequence: 1, sender: { id: s.agentId }, status: 'deleted' });
      const history = ListMessagesResponse.parse(
        (await call('GET', `/v1/conversations/${s.conversationId}/messages`, { token: s.apiKey })).body,
      );
      expect(history.messages[0]).toMatchObject({
        id,
        sequence: 1,
        status: 'deleted',
        parts: [],
        reactions: [],
        fallback_text: null,
      });
      const deliveriesBefore = mock.deliveries.length;
      await mock.idle();
      expect(mock.deliveries).toHaveLength(deliveriesBefore);
      // A second unsend answers the tombstone again.
      const again = await call('DELETE', `/v1/messages/${id}`, { token: s.apiKey });
      expect(again.status).toBe(200);
      expect(UnsendResponse.parse(again.body).message.status).toBe('deleted');
    });

    it('answers 409 unsend_window_elapsed after 120 s on the clock', async () => {
      const { s, id } = await agentMessage();
      await mock.clock.advance(120);
      await mock.clock.advance(1);
      const answer = await call('DELETE', `/v1/messages/${id}`, { token: s.apiKey });
      expect(answer.status).toBe(409);
      expect(errorOf(answer).code).toBe('unsend_window_elapsed');
    });

    it('still accepts an unsend at 119 s', async () => {
      const { s, id } = await agentMessage();
      await mock.clock.advance(119);
      expect((await call('DELETE', `/v1/messages/${id}`, { token: s.apiKey })).status).toBe(200);
    });

    it("lets a user unsend with their session, and answers 403 for someone else's message", async () => {
      const { s, id } = await agentMessage();
      const { message } = mock.postUserMessage(s.conversationId, { user_id: s.userId, text: 'mine' });
      expect((await call('DELETE', `/v1/messages/${id}`, { token: s.sessionToken })).status).toBe(403);
      expect((await call('DELETE', `/v1/messages/${message.id}`, { token: s.apiKey })).status).toBe(403);
      const own = await call('DELETE', `/v1/messages/${message.id}`, { token: s.sessionToken });
      expect(own.status).toBe(200);
      expect(UnsendResponse.parse(own.body).message.sender.id).toBe(s.userId);
    });

    it('answers 404 to a caller outside the conversation', async () => {
      const { id } = await agentMessage();
      const stranger = mock.createUser({ display_name: 'Eve' });
      expect((await call('DELETE', `/v1/messages/${id}`, { token: stranger.session_token })).status).toBe(
        404,
      );
    });
  });
});
