// mock.seed(): one call makes the world tests start from; each piece is checked on the mock's state,
// its request log and deliveries, and by using the credentials it returns.
import {
  AgentClient,
  ConflictError,
  createBot,
  NotFoundError,
  UnprocessableEntityError,
  UserClient,
  ValidationError,
} from 'agent-messaging';
import { createMockService } from 'agent-messaging/testing';
import { mswHandlers } from 'agent-messaging/testing/msw';
import { http } from 'msw';
import { setupServer } from 'msw/node';
import { describe, expect, it, onTestFinished } from 'vitest';

describe('mock.seed', () => {
  it('makes an active agent, a user who installed it and their conversation, without a delivery', async () => {
    const mock = createMockService({ fetch: async () => new Response(null, { status: 500 }) });
    const seed = await mock.seed();

    expect(seed.agent).toMatchObject({
      status: 'active',
      webhook_status: 'verified',
      display_name: 'Helper',
    });
    expect(seed.agent.webhook_url).toBe('http://bot.test/webhook');
    expect(seed.agent.capabilities).toEqual(['text', 'file']);
    expect(seed.user).toMatchObject({ display_name: 'Ada', verified: true });
    expect(mock.requests.map((entry) => `${entry.method} ${entry.path}`)).toEqual(['POST /v1/agents']);
    expect(mock.deliveries).toEqual([]);
    const state = mock.snapshot();
    expect(state.agents).toEqual([expect.objectContaining({ id: seed.agent.id, status: 'active' })]);
    expect(state.users).toEqual([expect.objectContaining({ id: seed.user.id })]);

    // The credentials work: the agent sends into the conversation, the user unsends there.
    const connection = { baseUrl: mock.baseUrl, fetch: mock.fetch };
    const agent = new AgentClient({ apiKey: seed.apiKey, ...connection });
    const sent = await agent.messages.send(seed.conversationId, { text: 'Welcome' });
    const { message: posted } = mock.postUserMessage(seed.conversationId, {
      user_id: seed.user.id,
      text: 'hi',
    });
    const user = new UserClient({ sessionToken: seed.sessionToken, ...connection });
    await user.messages.unsend(posted.id);
    const { messages } = await agent.conversations.listMessages(seed.conversationId);
    expect(messages.map((message) => [message.id, message.status])).toEqual([
      [posted.id, 'deleted'],
      [sent.message.id, 'sent'],
    ]);
    expect(seed.webhookSecret).toMatch(/^whsec_/);
  });

  it('takes the handle, names, capabilities and webhook URL it is given', async () => {
    const mock = createMockService();
    const seed = await mock.seed({
      handle: 'weather_bot',
      displayName: 'Weather',
      webhookUrl: 'https://bot.example/hook',
      capabilities: ['text'],
      userName: 'Grace',
    });
    expect(seed.agent).toMatchObject({
      handle: 'weather_bot',
      display_name: 'Weather',
      webhook_url: 'https://bot.example/hook',
      capabilities: ['text'],
    });
    expect(seed.user.display_name).toBe('Grace');
    const registration = JSON.parse(mock.requests[0]?.body ?? '{}');
    expect(registration).toEqual({
      handle: 'weather_bot',
      display_name: 'Weather',
      webhook_url: 'https://bot.example/hook',
      capabilities: ['text'],
    });
  });

  it('makes a new agent on every call', async () => {
    const mock = createMockService();
    const first = await mock.seed();
    const second = await mock.seed();
    expect(second.agent.id).not.toBe(first.agent.id);
    expect(second.agent.handle).not.toBe(first.agent.handle);
    expect(second.conversationId).not.toBe(first.conversationId);
  });

  it('lets a bot made from its credentials get the user messages, signed with its secret', async () => {
    const mock = createMockService({ fetch: (request) => bot.fetch(request) });
    const seed = await mock.seed();
    const bot = createBot({
      apiKey: seed.apiKey,
      webhookSecret: seed.webhookSecret,
      baseUrl: mock.baseUrl,
      fetch: mock.fetch,
    });
    bot.on('message.received', (ctx) => ctx.reply(`You said: ${ctx.text}`));
    mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text: 'hi' });
    await mock.idle();
    expect(mock.deliveries.map((delivery) => [delivery.type, delivery.status])).toEqual([
      ['message.received', 200],
    ]);
    const { messages } = await bot.client.conversations.listMessages(seed.conversationId);
    expect(messages.map((message) => message.fallback_text)).toEqual(['You said: hi', 'hi']);
  });

  it('with verifyWebhook sends the signed webhook.test and fails with 422 when it is not answered 2xx', async () => {
    let status = 204;
    const mock = createMockService({ fetch: async () => new Response(null, { status }) });
    const seed = await mock.seed({ verifyWebhook: true });
    expect(seed.agent.status).toBe('active');
    expect(mock.deliveries.map((delivery) => [delivery.type, delivery.status])).toEqual([
      ['webhook.test', 204],
    ]);
    expect(mock.requests.map((entry) => `${entry.method} ${entry.path}`)).toEqual([
      'POST /v1/agents',
      `PATCH /v1/agents/${seed.agent.id}/webhook`,
    ]);

    status = 500;
    const failed = mock.seed({ handle: 'unanswered', verifyWebhook: true });
    await expect(failed).rejects.toBeInstanceOf(UnprocessableEntityError);
    const agent = mock.snapshot().agents.find((entry) => entry.handle === 'unanswered');
    expect(agent?.status).toBe('pending_webhook');
  });

  it('refuses a bad handle before sending anything, and a taken one with the service answer', async () => {
    const mock = createMockService();
    const bad = mock.seed({ handle: 'No Spaces' });
    await expect(bad).rejects.toBeInstanceOf(ValidationError);
    await expect(bad).rejects.toThrow(/handle/);
    expect(mock.requests).toEqual([]);

    await mock.seed({ handle: 'taken' });
    await expect(mock.seed({ handle: 'taken' })).rejects.toBeInstanceOf(ConflictError);
    expect(mock.snapshot().users).toHaveLength(1);
  });

  it('under msw, reaches a bot whose webhook URL has an msw handler forwarding to bot.fetch', async () => {
    // README's "Testing your bot with the mock" under msw: webhooks leave through the global fetch.
    const mock = createMockService();
    const server = setupServer(
      ...mswHandlers(mock),
      http.post('http://bot.test/webhook', ({ request }) => bot.fetch(request)),
    );
    server.listen({ onUnhandledFrame: 'error' });
    onTestFinished(() => server.close());
    const seed = await mock.seed({ webhookUrl: 'http://bot.test/webhook' });
    const bot = createBot({ apiKey: seed.apiKey, webhookSecret: seed.webhookSecret, baseUrl: mock.baseUrl });
    bot.on('message.received', (ctx) => ctx.reply(`You said: ${ctx.text}`));

    mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text: 'over msw' });
    await mock.idle();

    expect(mock.deliveries.map((delivery) => [delivery.type, delivery.status])).toEqual([
      ['message.received', 200],
    ]);
    const { messages } = await bot.client.conversations.listMessages(seed.conversationId);
    expect(messages[0]?.fallback_text).toBe('You said: over msw');
    expect(
      mock.requests.filter((entry) => entry.method === 'POST' && entry.path.endsWith('/messages')),
    ).toHaveLength(1);
  });

  it('gives each of many users their own conversation, and a repeat install the same one', async () => {
    const mock = createMockService();
    const seed = await mock.seed();
    const users = Array.from({ length: 2000 }, (_, i) => mock.createUser({ display_name: `User ${i}` }).user);
    const first = users.map((user) => mock.installAgent({ user_id: user.id, agent_id: seed.agent.id }));
    const again = users.map((user) => mock.installAgent({ user_id: user.id, agent_id: seed.agent.id }));

    expect(again).toEqual(first);
    expect(new Set(first.map((install) => install.conversation_id)).size).toBe(users.length);
    const state = mock.snapshot();
    expect(state.conversations).toHaveLength(users.length + 1);
    const last = users.at(-1)!;
    expect(state.users.find((user) => user.id === last.id)?.installs).toEqual([seed.agent.id]);
    expect(state.conversations.find((c) => c.id === first[0]!.conversation_id)?.participants).toEqual([
      expect.objectContaining({ id: users[0]!.id }),
      expect.objectContaining({ id: seed.agent.id }),
    ]);
    // The newest user's session is known: an unknown message is 404, not 401.
    const { session_token } = state.users.find((user) => user.id === last.id)!;
    const client = new UserClient({ sessionToken: session_token, baseUrl: mock.baseUrl, fetch: mock.fetch });
    await expect(client.messages.unsend('msg_none')).rejects.toBeInstanceOf(NotFoundError);
  });
});
