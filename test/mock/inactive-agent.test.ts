// PROTOCOL.md section 2: 403 `forbidden` for any action of an agent that is not `active`. The mock
// reads "action" as every agent call except reads (GET) and the webhook PATCH, which is how an agent
// becomes active. Existence and membership (404) and shape and limits (400, 413) still come first.
import { schemas } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
// Private: the mock's route list, so a new agent route cannot skip the inactive-agent rule.
import { serviceRoutes } from '../../src/testing/service.js';
import { DOORS, useDoor } from './doors.js';
import { type Call, type CallOptions, errorOf, newKey, textSend } from './helpers.js';

// The wire schemas as values, from the public namespace.
const { RegisterAgentResponse } = schemas;

/** A registered agent whose webhook is not verified, installed by a user who wrote to it. */
async function pendingAgent(mock: ReturnType<typeof useDoor>['mock'], call: Call) {
  const registered = RegisterAgentResponse.parse(
    (
      await call('POST', '/v1/agents', {
        body: {
          handle: 'pending_bot',
          display_name: 'Pending',
          webhook_url: 'https://bot.example/pending',
          capabilities: ['text'],
        },
      })
    ).body,
  );
  const { user } = mock.createUser({ display_name: 'Bo' });
  const { conversation_id } = mock.installAgent({ user_id: user.id, agent_id: registered.agent.id });
  const { message } = mock.postUserMessage(conversation_id, { user_id: user.id, text: 'anyone there?' });
  return {
    agentId: registered.agent.id,
    apiKey: registered.api_key,
    userId: user.id,
    conversationId: conversation_id,
    messageId: message.id,
  };
}

type Pending = Awaited<ReturnType<typeof pendingAgent>>;

interface Case {
  /** What the call does, for the test name. */
  name: string;
  /** The route as the mock declares it: method and path pattern. */
  route: string;
  /** A request of that route, valid in shape, to something the agent may see. */
  request: (p: Pending) => [method: string, path: string, options?: CallOptions];
}

/** One valid request per agent action (everything but reads and the webhook PATCH). */
const actions: Case[] = [
  {
    name: 'an upload handle',
    route: 'POST /v1/attachments',
    request: () => [
      'POST',
      '/v1/attachments',
      { body: { name: 'a.txt', mime_type: 'text/plain', size_bytes: 5 } },
    ],
  },
  {
    name: 'a send',
    route: 'POST /v1/conversations/:conversation_id/messages',
    request: (p) => [
      'POST',
      `/v1/conversations/${p.conversationId}/messages`,
      { body: textSend('hi'), idempotencyKey: newKey() },
    ],
  },
  {
    name: 'a streaming send',
    route: 'POST /v1/conversations/:conversation_id/messages',
    request: (p) => [
      'POST',
      `/v1/conversations/${p.conversationId}/messages?stream=true`,
      { body: textSend('hi', { stream: true }), idempotencyKey: newKey() },
    ],
  },
  {
    name: 'typing',
    route: 'POST /v1/conversations/:conversation_id/typing',
    request: (p) => ['POST', `/v1/conversations/${p.conversationId}/typing`, { body: { state: 'start' } }],
  },
  {
    name: 'a delivery receipt',
    route: 'POST /v1/conversations/:conversation_id/receipts',
    request: (p) => [
      'POST',
      `/v1/conversations/${p.conversationId}/receipts`,
      { body: { message_id: p.messageId, type: 'delivered' } },
    ],
  },
  {
    name: 'a read receipt',
    route: 'POST /v1/conversations/:conversation_id/read',
    request: (p) => [
      'POST',
      `/v1/conversations/${p.conversationId}/read`,
      { body: { message_id: p.messageId } },
    ],
  },
  {
    name: 'a reaction',
    route: 'POST /v1/messages/:message_id/reactions',
    request: (p) => [
      'POST',
      `/v1/messages/${p.messageId}/reactions`,
      { body: { emoji: '👍', action: 'add' } },
    ],
  },
  {
    name: 'an append',
    route: 'POST /v1/messages/:message_id/blocks/:block_id/append',
    request: (p) => [
      'POST',
      `/v1/messages/${p.messageId}/blocks/blk_any/append`,
      { body: { path: '/text', value: 'x' } },
    ],
  },
  {
    name: 'a complete',
    route: 'POST /v1/messages/:message_id/complete',
    request: (p) => ['POST', `/v1/messages/${p.messageId}/complete`, { body: { status: 'sent' } }],
  },
  {
    name: 'an unsend',
    route: 'DELETE /v1/messages/:message_id',
    request: (p) => ['DELETE', `/v1/messages/${p.messageId}`],
  },
  {
    name: 'a group invite',
    route: 'POST /v1/groups/invites',
    request: (p) => [
      'POST',
      '/v1/groups/invites',
      { body: { title: 'T', user_ids: [p.userId], reason: 'R' }, idempotencyKey: newKey() },
    ],
  },
];

/** The reads, allowed before the webhook is verified. */
const reads: Case[] = [
  {
    name: 'the conversation',
    route: 'GET /v1/conversations/:conversation_id',
    request: (p) => ['GET', `/v1/conversations/${p.conversationId}`],
  },
  {
    name: 'the history',
    route: 'GET /v1/conversations/:conversation_id/messages',
    request: (p) => ['GET', `/v1/conversations/${p.conversationId}/messages`],
  },
];

const WEBHOOK_PATCH = 'PATCH /v1/agents/:agent_id/webhook';

describe('the list of agent calls below', () => {
  it('covers every route that takes an agent token, so a new endpoint cannot skip the rule', () => {
    const agentRoutes = serviceRoutes
      .filter((route) => route.auth === 'agent' || route.auth === 'any')
      .map((route) => `${route.method} ${route.path}`);
    const covered = new Set([...actions, ...reads].map((entry) => entry.route).concat(WEBHOOK_PATCH));
    expect([...covered].sort()).toEqual([...new Set(agentRoutes)].sort());
  });
});

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, call } = useDoor(door);
  const as = (p: Pending, [method, path, options]: ReturnType<Case['request']>) =>
    call(method, path, { ...options, token: p.apiKey });

  describe('an agent that is not active', () => {
    it.each(actions)('is answered 403 forbidden for $name, and nothing is done', async (entry) => {
      const p = await pendingAgent(mock, call);
      const state = () => {
        const { conversations, attachments, invites } = mock.snapshot();
        return { conversations, attachments, invites };
      };
      const before = state();
      const answer = await as(p, entry.request(p));
      expect(answer.status).toBe(403);
      expect(errorOf(answer).code).toBe('forbidden');
      expect(errorOf(answer).message).toContain('not active');
      // Nothing was done: no message, receipt, reaction, handle or invite.
      expect(state()).toEqual(before);
    });

    it('may read its conversations and their history', async () => {
      const p = await pendingAgent(mock, call);
      for (const entry of reads) expect((await as(p, entry.request(p))).status, entry.route).toBe(200);
    });

    it('is answered 404, not 403, for a conversation it is not in', async () => {
      const p = await pendingAgent(mock, call);
      const answer = await call('POST', '/v1/conversations/cnv_elsewhere/typing', {
        token: p.apiKey,
        body: { state: 'start' },
      });
      expect(answer.status).toBe(404);
    });

    it('is answered 413, not 403, for an upload handle over 100 MiB', async () => {
      const p = await pendingAgent(mock, call);
      const answer = await call('POST', '/v1/attachments', {
        token: p.apiKey,
        body: { name: 'big.bin', mime_type: 'application/octet-stream', size_bytes: 100 * 1024 * 1024 + 1 },
      });
      expect(answer.status).toBe(413);
    });

    it('is answered 400, not 403, for a request of the wrong shape', async () => {
      const p = await pendingAgent(mock, call);
      const answer = await call('POST', `/v1/conversations/${p.conversationId}/read`, {
        token: p.apiKey,
        body: {},
      });
      expect(answer.status).toBe(400);
      expect(errorOf(answer).message).toContain('message_id');
    });

    it('becomes active through the webhook PATCH, and then may act', async () => {
      const p = await pendingAgent(mock, call);
      const patched = await call('PATCH', `/v1/agents/${p.agentId}/webhook`, {
        token: p.apiKey,
        body: { webhook_url: 'https://bot.example/pending' },
      });
      expect(patched.status).toBe(200);
      const read = await call('POST', `/v1/conversations/${p.conversationId}/read`, {
        token: p.apiKey,
        body: { message_id: p.messageId },
      });
      expect(read.status).toBe(200);
      const upload = await call('POST', '/v1/attachments', {
        token: p.apiKey,
        body: { name: 'a.txt', mime_type: 'text/plain', size_bytes: 5 },
      });
      expect(upload.status).toBe(201);
    });
  });
});
