// Types that catch typos: the response types list only known fields (no index signature), so a
// misspelt field is a compile error that `tsc --noEmit` reports on this file; at run time the
// schemas stay loose and unknown fields still pass through.
import type { Message, MessagePart, ResponseBlock } from 'agent-messaging';
import { HttpResponse, http } from 'msw';
import { describe, expect, expectTypeOf, test } from 'vitest';
import { useWorld } from './world.js';

describe('conversations.listMessages: response types', () => {
  const w = useWorld('msw');

  test('a misspelt field does not compile, an unknown field still arrives at run time', async () => {
    const page = {
      messages: [
        {
          id: 'msg_1',
          conversation_id: w.conversationId,
          sequence: 1,
          sender: { id: w.userId },
          status: 'sent',
          created_at: '2026-01-01T00:00:00Z',
          parts: [{ part_index: 0, type: 'poll', text: 'Lunch?', question_id: 'q_1' }],
          future_field: 'kept',
        },
      ],
    };
    w.server?.use(http.get(`${w.baseUrl}/v1/conversations/:id/messages`, () => HttpResponse.json(page)));

    const { messages } = await w.client.conversations.listMessages(w.conversationId);
    const [message] = messages;
    if (!message) throw new Error('expected a message');

    expect(message.conversation_id).toBe(w.conversationId);
    // @ts-expect-error `convesation_id` is a typo: the type has no index signature to hide it.
    expect(message.convesation_id).toBeUndefined();
    // Unknown fields pass through at run time; reading one takes a deliberate cast.
    expect((message as { future_field?: unknown }).future_field).toBe('kept');
    // An unknown part type passes through too: the type is an open enum.
    expect(message.parts?.[0]?.type).toBe('poll');
    expect((message.parts?.[0] as { question_id?: unknown } | undefined)?.question_id).toBe('q_1');
  });

  test('block and part types are open enums that still name the known values', () => {
    expectTypeOf<'text'>().toExtend<MessagePart['type']>();
    expectTypeOf<'file'>().toExtend<ResponseBlock['type']>();
    expectTypeOf<'carousel'>().toExtend<MessagePart['type']>();
    expectTypeOf<Message>().not.toHaveProperty('convesation_id');
    expectTypeOf<Message>().toHaveProperty('conversation_id').toEqualTypeOf<string>();
  });
});
