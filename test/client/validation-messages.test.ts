// The words of validation errors: the schemas are zod/mini, which has no messages of its own, so the
// SDK words every rule itself. These pin the wording users read, in the SDK, the mock and on answers.
import { InvalidResponseError, ValidationError } from 'agent-messaging';
import { HttpResponse, http } from 'msw';
import { afterEach, describe, expect, test } from 'vitest';
import * as z from 'zod/mini';
import { rejectionOf, useWorld, type World } from './world.js';

const w = useWorld('msw');
const invite = { title: 'Trip', user_ids: ['usr_1'], reason: 'Plan' };

// Each case: a call with one bad input, and the whole line its ValidationError must hold.
const cases: [string, (world: World) => PromiseLike<unknown>, string][] = [
  [
    'a string over its limit',
    (x) => x.client.groups.invite({ ...invite, reason: 'r'.repeat(201) }),
    'reason: must be at most 200 characters',
  ],
  [
    'an empty list',
    (x) => x.client.groups.invite({ ...invite, user_ids: [] }),
    'user_ids: must have at least 1 item',
  ],
  [
    'a list over its limit',
    (x) => x.client.groups.invite({ ...invite, user_ids: Array.from({ length: 25 }, (_, i) => `usr_${i}`) }),
    'user_ids: must have at most 24 items',
  ],
  [
    'a value outside an enum',
    (x) => x.client.conversations.typing(x.conversationId, { state: 'on' as 'start' }),
    "state: must be one of 'start', 'stop'",
  ],
  [
    'a value other than a literal',
    (x) => x.client.messages.complete('msg_1', { status: 'done' as 'sent' }),
    "status: must be 'sent'",
  ],
  [
    'an unknown block type',
    (x) => x.client.messages.send(x.conversationId, { content: [{ type: 'video' } as never] }),
    "content[0].type: must be one of 'text', 'actions', 'file', 'image'",
  ],
  [
    'a missing field',
    (x) => x.client.conversations.sendReceipt(x.conversationId, { type: 'delivered' } as never),
    'message_id: is required',
  ],
  [
    'a field the send shape does not have',
    (x) => x.client.messages.send(x.conversationId, { text: 'hi', fallback_text: 'hi' } as never),
    'fallback_text: is not a known field',
  ],
  [
    'a number where a string belongs',
    (x) => x.client.messages.react('msg_1', { emoji: 7 as unknown as string, action: 'add' }),
    'emoji: must be a string',
  ],
  [
    'an empty string',
    (x) => x.client.messages.react('msg_1', { emoji: '', action: 'add' }),
    'emoji: must not be empty',
  ],
  [
    'a fraction where an integer belongs',
    (x) => x.client.conversations.listMessages(x.conversationId, { limit: 1.5 }),
    'limit: must be an integer',
  ],
  [
    'a number under its minimum',
    (x) => x.client.conversations.listMessages(x.conversationId, { limit: 0 }),
    'limit: must be at least 1',
  ],
  [
    'a short Idempotency-Key',
    (x) => x.client.groups.invite(invite, { idempotencyKey: 'abc' }),
    'idempotencyKey: must be at least 8 characters',
  ],
];

describe('validation messages', () => {
  afterEach(() => {
    z.config({ customError: undefined });
  });

  test.each(cases)('%s is worded after the field, and nothing is sent', async (_name, call, line) => {
    const error = await rejectionOf(call(w));

    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toContain(line);
    expect(w.fetched).toEqual([]);
    expect(w.requests()).toEqual([]);
  });

  test("the application's own zod error map does not change the SDK's words", async () => {
    z.config({ customError: () => 'from the application' });

    const error = await rejectionOf(w.client.groups.invite({ ...invite, reason: 'r'.repeat(201) }));

    expect((error as ValidationError).message).toContain('reason: must be at most 200 characters');
    expect((error as ValidationError).message).not.toContain('from the application');
  });

  test('the mock answers 400 with the same words, naming the field', async () => {
    const answer = await fetch(`${w.baseUrl}/v1/conversations/${w.conversationId}/typing`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ state: 'on', mood: 'happy' }),
    });

    expect(answer.status).toBe(400);
    const { error } = (await answer.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('invalid_request');
    expect(error.message).toContain("state: must be one of 'start', 'stop'");
    expect(error.message).toContain('mood: is not a known field');
    expect(w.requests().map((request) => request.path)).toEqual([
      `/v1/conversations/${w.conversationId}/typing`,
    ]);
  });

  test('an answer of the wrong shape names each field and its rule', async () => {
    w.server?.use(
      http.post(`${w.mock.baseUrl}/v1/conversations/:id/typing`, () =>
        HttpResponse.json({ conversation_id: 7, state: 'start' }),
      ),
    );

    const error = await rejectionOf(w.client.conversations.typing(w.conversationId, { state: 'start' }));

    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as InvalidResponseError).issues).toEqual([
      { field: 'conversation_id', message: 'must be a string' },
      { field: 'expires_at', message: 'is required' },
    ]);
  });
});
