// The mock's live feed in-process (mock.events) and its snapshot (mock.snapshot()), as the
// emulator page and a test see them.
import {
  createMockService,
  type MockEvent as MockEventType,
  type MockService,
  mockSchemas,
} from 'agent-messaging/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Call, newKey, setupScenario, textSend, WebhookReceiver } from '../mock/helpers.js';

// The wire schemas as values, from the public namespace.
const { MockEvent, MockStateSnapshot } = mockSchemas;

/** The helper client's call, through mock.fetch instead of the network. */
function callThrough(mock: MockService): Call {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['content-type'] ??= 'application/json';
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const response = await mock.fetch(path, { method, headers, body });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
  };
}

function useRecordedMock() {
  const receiver = new WebhookReceiver();
  const mock = createMockService({ fetch: receiver.fetch });
  const events: MockEventType[] = [];
  const subscriptions: (() => void)[] = [];
  beforeEach(async () => {
    await mock.idle();
    mock.reset();
    events.length = 0;
  });
  afterEach(() => {
    for (const stop of subscriptions.splice(0)) stop();
  });
  return {
    mock,
    receiver,
    events,
    call: callThrough(mock),
    /** Subscribes the recorder; every event is checked against the shared schema. */
    listen() {
      const stop = mock.events.subscribe((event) => {
        MockEvent.parse(event);
        events.push(event);
      });
      subscriptions.push(stop);
      return stop;
    },
    ofType<T extends MockEventType['type']>(type: T) {
      return events.filter((event): event is Extract<MockEventType, { type: T }> => event.type === type);
    },
  };
}

const ctx = useRecordedMock();

describe('mock.events', () => {
  it('announces agents, users, installs and the conversation they create', async () => {
    ctx.listen();
    const s = await setupScenario(ctx.mock);
    expect(ctx.events.map((event) => event.type)).toEqual([
      'request',
      'agent.created',
      'request',
      'delivery',
      'agent.updated',
      'user.created',
      'conversation.updated',
      'user.updated',
    ]);
    const [created] = ctx.ofType('agent.created');
    expect(created?.agent).toMatchObject({ id: s.agentId, status: 'pending_webhook' });
    expect(ctx.ofType('agent.updated')[0]?.agent).toMatchObject({
      status: 'active',
      webhook_status: 'verified',
    });
    expect(ctx.ofType('user.created')[0]?.user).toMatchObject({
      id: s.userId,
      session_token: s.sessionToken,
    });
    expect(ctx.ofType('user.updated')[0]?.user.installs).toEqual([s.agentId]);
    expect(ctx.ofType('conversation.updated')[0]?.conversation).toMatchObject({
      id: s.conversationId,
      kind: 'agent',
      participants: [
        { id: s.userId, kind: 'user', display_name: 'Ada', active: true },
        { id: s.agentId, kind: 'agent', display_name: 'Helper', active: true },
      ],
    });
    // The request entries are the log's, tokens redacted.
    expect(ctx.ofType('request').map((event) => event.request.path)).toEqual([
      '/v1/agents',
      `/v1/agents/${s.agentId}/webhook`,
    ]);
    expect(JSON.stringify(ctx.events)).not.toContain(s.apiKey);
    expect(JSON.stringify(ctx.events)).not.toContain(s.webhookSecret);
  });

  it('sends the whole message after every patch of a streamed reply, with its revision', async () => {
    const s = await setupScenario(ctx.mock);
    ctx.listen();
    const posted = ctx.mock.postUserMessage(s.conversationId, { user_id: s.userId, text: 'hello' });
    const blockId = 'blk_reply_text';
    const started = await ctx.mock.fetch(`/v1/conversations/${s.conversationId}/messages?stream=true`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${s.apiKey}`,
        'idempotency-key': newKey(),
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        schema: 'svc.agent-send.v1',
        content: [{ type: 'text', text: '', id: blockId }],
        stream: true,
      }),
    });
    expect(started.status).toBe(200);
    // The page follows the feed, not this stream: going away leaves the message as it is.
    await started.body?.cancel();
    const [, reply] = ctx.ofType('message.created');
    if (!reply) throw new Error('no message.created for the reply');
    const messageId = reply.message.id;
    expect(ctx.mock.snapshot().conversations[0]?.messages.map((m) => m.id)).toEqual([
      posted.message.id,
      messageId,
    ]);
    for (const piece of ['Hel', 'lo', '!']) {
      await ctx.call('POST', `/v1/messages/${messageId}/blocks/${blockId}/append`, {
        token: s.apiKey,
        body: { path: '/text', value: piece },
      });
    }
    await ctx.call('POST', `/v1/messages/${messageId}/complete`, {
      token: s.apiKey,
      body: { status: 'sent', fallbackText: 'Hello!' },
    });
    expect(ctx.ofType('message.created').map((event) => event.message.sender.id)).toEqual([
      s.userId,
      s.agentId,
    ]);
    expect(reply.message).toMatchObject({ status: 'streaming', revision: 0 });
    const updates = ctx.ofType('message.updated').map((event) => ({
      text: event.message.parts?.[0]?.text,
      status: event.message.status,
      revision: event.message.revision,
      fallback: event.message.fallback_text,
    }));
    expect(updates).toEqual([
      { text: 'Hel', status: 'streaming', revision: 1, fallback: 'Hel' },
      { text: 'Hello', status: 'streaming', revision: 2, fallback: 'Hello' },
      { text: 'Hello!', status: 'streaming', revision: 3, fallback: 'Hello!' },
      { text: 'Hello!', status: 'sent', revision: 3, fallback: 'Hello!' },
    ]);
    expect(ctx.ofType('message.updated').every((event) => event.conversation_id === s.conversationId)).toBe(
      true,
    );
  });

  it('reports typing, receipts, reads, reactions and unsends as they apply, and repeats not at all', async () => {
    const s = await setupScenario(ctx.mock);
    const { message } = ctx.mock.postUserMessage(s.conversationId, { user_id: s.userId, text: 'hi' });
    ctx.listen();
    const base = `/v1/conversations/${s.conversationId}`;
    await ctx.call('POST', `${base}/typing`, { token: s.apiKey, body: { state: 'start' } });
    await ctx.call('POST', `${base}/receipts`, {
      token: s.apiKey,
      body: { message_id: message.id, type: 'delivered' },
    });
    await ctx.call('POST', `${base}/receipts`, {
      token: s.apiKey,
      body: { message_id: message.id, type: 'delivered' },
    });
    await ctx.call('POST', `${base}/read`, { token: s.apiKey, body: { message_id: message.id } });
    await ctx.call('POST', `/v1/messages/${message.id}/reactions`, {
      token: s.apiKey,
      body: { emoji: '👍', action: 'add' },
    });
    await ctx.call('POST', `/v1/messages/${message.id}/reactions`, {
      token: s.apiKey,
      body: { emoji: '👍', action: 'add' },
    });
    const sent = await ctx.call('POST', `${base}/messages`, {
      token: s.apiKey,
      idempotencyKey: newKey(),
      body: textSend('oops'),
    });
    const sentId = (sent.body as { message: { id: string } }).message.id;
    await ctx.call('DELETE', `/v1/messages/${sentId}`, { token: s.apiKey });

    const [typing] = ctx.ofType('typing');
    expect(typing).toMatchObject({ conversation_id: s.conversationId, actor_id: s.agentId, state: 'start' });
    const updates = ctx.ofType('message.updated').map((event) => event.message);
    expect(
      updates.map((m) => [m.id, Boolean(m.delivered_at), Boolean(m.read_at), m.reactions?.length]),
    ).toEqual([
      [message.id, true, false, 0],
      [message.id, true, true, 0],
      [message.id, true, true, 1],
      [sentId, false, false, 0],
    ]);
    expect(updates.at(-1)).toMatchObject({ id: sentId, status: 'deleted', parts: [] });
  });

  it('shows the metadata an agent sent on its message, which /v1 history does not', async () => {
    const s = await setupScenario(ctx.mock);
    ctx.listen();
    const metadata = { question: { name: 'confirm' }, run_id: 'r1' };
    const sent = await ctx.call('POST', `/v1/conversations/${s.conversationId}/messages`, {
      token: s.apiKey,
      idempotencyKey: newKey(),
      body: textSend('Sure?', { metadata }),
    });
    const id = (sent.body as { message: { id: string } }).message.id;
    expect(ctx.ofType('message.created').map((event) => event.message)).toEqual([
      expect.objectContaining({ id, metadata }),
    ]);
    const snapshot = MockStateSnapshot.parse(ctx.mock.snapshot());
    expect(snapshot.conversations[0]?.messages).toEqual([expect.objectContaining({ id, metadata })]);
    // A user's message carries none.
    const { message } = ctx.mock.postUserMessage(s.conversationId, { user_id: s.userId, text: 'yes' });
    expect(ctx.ofType('message.created').at(-1)?.message).toMatchObject({ id: message.id, metadata: null });
    const history = await ctx.call('GET', `/v1/conversations/${s.conversationId}/messages`, {
      token: s.apiKey,
    });
    expect((history.body as { messages: object[] }).messages.every((m) => !('metadata' in m))).toBe(true);
  });

  it('follows a group invite from consent cards through each acceptance to the new group', async () => {
    const s = await setupScenario(ctx.mock);
    const grace = ctx.mock.createUser({ display_name: 'Grace' });
    ctx.mock.installAgent({ user_id: grace.user.id, agent_id: s.agentId });
    ctx.listen();
    const created = await ctx.call('POST', '/v1/groups/invites', {
      token: s.apiKey,
      idempotencyKey: newKey(),
      body: { title: 'Trip', user_ids: [s.userId, grace.user.id], reason: 'Plan the trip' },
    });
    const inviteId = (created.body as { invite: { id: string } }).invite.id;
    const cards = ctx.ofType('message.created');
    expect(cards).toHaveLength(2);
    expect(cards[0]?.message.parts?.[1]?.actions).toEqual([
      { actionId: 'accept', label: 'Accept', behavior: { type: 'postback', value: `accept:${inviteId}` } },
    ]);
    await ctx.call('POST', `/v1/groups/invites/${inviteId}/accept`, { token: s.sessionToken });
    await ctx.call('POST', `/v1/groups/invites/${inviteId}/accept`, { token: s.sessionToken });
    await ctx.call('POST', `/v1/groups/invites/${inviteId}/accept`, { token: grace.session_token });
    const invites = ctx.ofType('invite.updated').map((event) => event.invite);
    expect(invites.map((invite) => [invite.status, invite.accepted_user_ids])).toEqual([
      ['pending', []],
      ['pending', [s.userId]],
      ['completed', [s.userId, grace.user.id]],
    ]);
    const group = ctx.ofType('conversation.updated').at(-1)?.conversation;
    expect(group).toMatchObject({ kind: 'group', title: 'Trip' });
    expect(group?.participants.map((p) => p.display_name)).toEqual(['Ada', 'Grace', 'Helper']);
    expect(invites.at(-1)?.conversation_id).toBe(group?.id);
  });

  it('reports each webhook attempt with the status it got', async () => {
    const s = await setupScenario(ctx.mock);
    ctx.listen();
    ctx.receiver.status = 500;
    ctx.mock.postUserMessage(s.conversationId, { user_id: s.userId, text: 'hi' });
    await ctx.mock.idle();
    ctx.receiver.status = 204;
    await ctx.mock.clock.advance(5);
    await ctx.mock.idle();
    const deliveries = ctx.ofType('delivery').map((event) => event.delivery);
    expect(deliveries.map((d) => [d.type, d.attempt, d.status])).toEqual([
      ['message.received', 1, 500],
      ['message.received', 2, 204],
    ]);
    expect(ctx.ofType('clock')).toHaveLength(1);
    expect(Date.parse(ctx.ofType('clock')[0]?.now ?? '')).toBeGreaterThan(Date.now() + 4000);
  });

  it('announces a reset, keeps its listeners across it, and stops after unsubscribe', async () => {
    const stop = ctx.listen();
    ctx.mock.reset();
    ctx.mock.createUser({ display_name: 'After reset' });
    expect(ctx.mock.events.listenerCount).toBe(1);
    stop();
    expect(ctx.mock.events.listenerCount).toBe(0);
    ctx.mock.createUser({ display_name: 'Unheard' });
    expect(ctx.events.map((event) => event.type)).toEqual(['reset', 'user.created']);
  });

  it('keeps the mock working when a listener throws', async () => {
    const errors: unknown[] = [];
    const onError = (error: unknown) => errors.push(error);
    process.on('uncaughtException', onError);
    const stop = ctx.mock.events.subscribe(() => {
      throw new Error('listener bug');
    });
    try {
      const { user } = ctx.mock.createUser({ display_name: 'Still made' });
      expect(ctx.mock.snapshot().users.map((u) => u.id)).toEqual([user.id]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(errors).toHaveLength(1);
    } finally {
      stop();
      process.off('uncaughtException', onError);
    }
  });
});

describe('mock.snapshot()', () => {
  it('holds agents without credentials, users with tokens, conversations with messages, and the logs', async () => {
    const s = await setupScenario(ctx.mock);
    ctx.mock.postUserMessage(s.conversationId, { user_id: s.userId, text: 'first' });
    await ctx.mock.idle();
    const snapshot = MockStateSnapshot.parse(ctx.mock.snapshot());
    expect(snapshot.agents).toEqual([expect.objectContaining({ id: s.agentId, status: 'active' })]);
    expect(snapshot.users).toEqual([
      {
        id: s.userId,
        display_name: 'Ada',
        verified: true,
        session_token: s.sessionToken,
        installs: [s.agentId],
      },
    ]);
    expect(snapshot.conversations).toHaveLength(1);
    expect(snapshot.conversations[0]?.messages.map((m) => m.parts?.[0]?.text)).toEqual(['first']);
    expect(snapshot.deliveries.map((d) => d.type)).toEqual(['webhook.test', 'message.received']);
    expect(snapshot.requests.map((r) => r.method)).toEqual(['POST', 'PATCH']);
    expect(Date.parse(snapshot.now)).not.toBeNaN();
    const text = JSON.stringify(snapshot);
    expect(text).not.toContain(s.apiKey);
    expect(text).not.toContain(s.webhookSecret);
  });
});
