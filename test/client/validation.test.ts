import { ValidationError } from 'agent-messaging';
import { afterEach, describe, expect, test } from 'vitest';
import { rejectionOf, useWorld, type World } from './world.js';

const w = useWorld('msw');

const userIds = (count: number) => Array.from({ length: count }, (_, i) => `usr_${i}`);
const invite = { title: 'Trip', user_ids: ['usr_1'], reason: 'Plan' };

// Each case: a call with one bad input, and the field the error must name.
const cases: [string, (world: World) => PromiseLike<unknown>, string][] = [
  ['a group title of only spaces', (x) => x.client.groups.invite({ ...invite, title: '   ' }), 'title'],
  ['25 user ids', (x) => x.client.groups.invite({ ...invite, user_ids: userIds(25) }), 'user_ids'],
  [
    'a user id without usr_',
    (x) => x.client.groups.invite({ ...invite, user_ids: ['usr_1', 'u2'] }),
    'user_ids[1]',
  ],
  [
    'a repeated user id',
    (x) => x.client.groups.invite({ ...invite, user_ids: ['usr_1', 'usr_1'] }),
    'user_ids',
  ],
  [
    'a reason over 200 characters',
    (x) => x.client.groups.invite({ ...invite, reason: 'r'.repeat(201) }),
    'reason',
  ],
  ['a page size of 0', (x) => x.client.conversations.listMessages(x.conversationId, { limit: 0 }), 'limit'],
  [
    'a page size of 101',
    (x) => x.client.conversations.listMessages(x.conversationId, { limit: 101 }),
    'limit',
  ],
  [
    'an Idempotency-Key of 7 characters',
    (x) => x.client.messages.send(x.conversationId, { text: 'hi' }, { idempotencyKey: 'abcdefg' }),
    'idempotencyKey',
  ],
  [
    'an Idempotency-Key with a space',
    (x) => x.client.groups.invite(invite, { idempotencyKey: 'has a space' }),
    'idempotencyKey',
  ],
  [
    'an unknown capability',
    (x) =>
      x.client.agents.setWebhook(x.agentId, {
        webhook_url: 'https://a.example/',
        capabilities: ['video' as 'text'],
      }),
    'capabilities[0]',
  ],
  [
    'a webhook URL that is not http',
    (x) => x.client.agents.setWebhook(x.agentId, { webhook_url: 'ftp://a' }),
    'webhook_url',
  ],
  ['a conversation id without cnv_', (x) => x.client.conversations.retrieve('abc'), 'conversationId'],
  ['an invite id without inv_', (x) => x.user.invites.accept('abc'), 'inviteId'],
  [
    'a block id without blk_',
    (x) => x.client.messages.append('msg_1', 'b', { path: '/text', value: 'x' }),
    'blockId',
  ],
  [
    'a message id that is not a string',
    (x) => x.client.messages.unsend(42 as unknown as string),
    'messageId',
  ],
  [
    'text over 32000 characters',
    (x) => x.client.messages.send(x.conversationId, { text: 'a'.repeat(32_001) }),
    'text',
  ],
  [
    'a block of an unknown type',
    (x) => x.client.messages.send(x.conversationId, { content: [{ type: 'video' } as never] }),
    'content[0].type',
  ],
  [
    'a snake_case field in the camelCase send shape',
    (x) => x.client.messages.send(x.conversationId, { text: 'hi', fallback_text: 'hi' } as never),
    'fallback_text',
  ],
  [
    'both text and content',
    (x) => x.client.messages.send(x.conversationId, { text: 'a', content: [] } as never),
    'content',
  ],
  [
    'stream in a plain send',
    (x) => x.client.messages.send(x.conversationId, { content: [], stream: true } as never),
    'stream',
  ],
  [
    'a typing state that does not exist',
    (x) => x.client.conversations.typing(x.conversationId, { state: 'on' as 'start' }),
    'state',
  ],
  ['an empty emoji', (x) => x.client.messages.react('msg_1', { emoji: '', action: 'add' }), 'emoji'],
  [
    'an append path other than /text',
    (x) => x.client.messages.append('msg_1', 'blk_1', { path: '/x' as '/text', value: 'v' }),
    'path',
  ],
  [
    'a receipt without message_id',
    (x) => x.client.conversations.sendReceipt(x.conversationId, { type: 'delivered' } as never),
    'message_id',
  ],
  [
    'a direct user id without usr_',
    (x) => x.user.conversations.createDirect({ user_id: 'someone' }),
    'user_id',
  ],
  [
    'a negative timeoutMs',
    (x) => x.client.conversations.retrieve(x.conversationId, { timeoutMs: -1 }),
    'timeoutMs',
  ],
  [
    'a header value with a line break',
    (x) => x.client.conversations.retrieve(x.conversationId, { headers: { 'x-trace': 'a\nb' } }),
    'headers.x-trace',
  ],
  [
    'a complete status other than sent',
    (x) => x.client.messages.complete('msg_1', { status: 'done' as 'sent' }),
    'status',
  ],
];

describe('invalid input', () => {
  afterEach(() => {
    // Nothing left the process: no fetch, and the mock saw no request.
    expect(w.fetched).toEqual([]);
    expect(w.requests()).toEqual([]);
  });

  test.each(cases)(
    '%s is a ValidationError naming the field, and nothing is sent',
    async (_name, call, field) => {
      const error = await rejectionOf(call(w));

      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe(field);
      expect((error as ValidationError).message).toContain(`${field}: `);
    },
  );

  test('history checks its input when called, before any page is fetched', () => {
    expect(() => w.client.conversations.history(w.conversationId, { limit: 0 })).toThrow(ValidationError);
    expect(() => w.client.conversations.history('nope')).toThrow(/conversationId: must start with "cnv_"/);
  });

  test('the error lists every offending field with its rule', async () => {
    const error = (await rejectionOf(
      w.client.groups.invite({ title: ' ', user_ids: [], reason: '' }),
    )) as ValidationError;

    expect(error.issues.map((issue) => issue.field)).toEqual(['title', 'user_ids', 'reason', 'reason']);
    expect(error.message).toMatch(
      /^Invalid input to groups\.invite: title: must contain a non-whitespace character; /,
    );
  });
});
