// The Chat SDK adapter, driven the way a Chat SDK user runs it: the real `chat` and
// `@chat-adapter/state-memory` packages, the example bot of examples/chat-sdk-bot.ts with an AI SDK
// model on the fake model server, the mock service and the bot each on a loopback port.

import { once } from 'node:events';
import { createServer } from 'node:http';
import { createOpenAI } from '@ai-sdk/openai';
import { createMemoryState } from '@chat-adapter/state-memory';
import { createRedisState } from '@chat-adapter/state-redis';
import type { BotStore } from 'agent-messaging';
import { AgentClient, ApiError, UserClient } from 'agent-messaging';
import { type ChatSdkAdapterOptions, createAgentMessagingAdapter } from 'agent-messaging/chat-sdk';
import { toNodeFetchHandler } from 'agent-messaging/node';
import { createRedisStore } from 'agent-messaging/redis';
import { createFakeModelServer, createMockService } from 'agent-messaging/testing';
import type { StateAdapter } from 'chat';
import { NotImplementedError } from 'chat';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createChatSdkBot } from '../../examples/chat-sdk-bot.js';
import { closeServer, webhookUrl } from '../../examples/support/try-on-mock.js';
import { connectClient, startRedis, type TestRedis, uniquePrefix } from '../store/redis-server.js';

/** Where the bots keep Chat SDK's state and the delivery dedupe: memory, or one Redis shared by all. */
interface Backend {
  state(): StateAdapter;
  store(): BotStore | undefined;
}

const inMemory: Backend = { state: () => createMemoryState(), store: () => undefined };

/** The mock, a fake model, and `instances` copies of the example bot behind one round-robin URL. */
async function world(
  backend: Backend = inMemory,
  instances = 1,
  options: Partial<ChatSdkAdapterOptions> = {},
) {
  const mock = createMockService();
  const { baseUrl, close } = await mock.listen({ port: 0 });
  onTestFinished(close);
  const model = await createFakeModelServer();
  onTestFinished(() => model.close());

  // The bot's server exists before the agent, so its URL can be the agent's webhook URL.
  const received: { body: string; headers: Record<string, string> }[] = [];
  let handle: (request: Request) => Promise<Response> = async () => new Response(null, { status: 503 });
  const server = createServer(
    toNodeFetchHandler({
      fetch: async (request) => {
        const body = await request.clone().text();
        received.push({ body, headers: Object.fromEntries(request.headers) });
        return handle(request);
      },
    }),
  ).listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTestFinished(() => closeServer(server));
  const url = webhookUrl(server, '/webhook');

  const seed = await mock.seed({ handle: 'helper', webhookUrl: url });
  const service = { apiKey: seed.apiKey, webhookSecret: seed.webhookSecret, baseUrl, agentId: seed.agent.id };
  const chats = Array.from({ length: instances }, () => {
    const store = backend.store();
    return createChatSdkBot({
      service: { ...service, ...options, ...(store ? { store } : {}) },
      model: createOpenAI({ baseURL: model.openaiBaseUrl, apiKey: 'test' }).chat('fake-model'),
      state: backend.state(),
    });
  });
  const chat = chats[0] as (typeof chats)[number];
  let next = 0;
  const background: Promise<unknown>[] = [];
  const waitUntil = (task: Promise<unknown>) => void background.push(task);
  handle = (request) =>
    (chats[next++ % chats.length] as typeof chat).webhooks.agentMessaging(request, { waitUntil });
  const client = new AgentClient({ apiKey: seed.apiKey, baseUrl });

  const say = async (text: string, conversationId = seed.conversationId, userId = seed.user.id) => {
    const { message } = mock.postUserMessage(conversationId, { user_id: userId, text });
    await mock.idle();
    return message;
  };
  const agentTexts = async (conversationId = seed.conversationId) => {
    const { messages } = await client.conversations.listMessages(conversationId);
    return messages
      .filter((m) => m.sender.id === seed.agent.id && m.status !== 'deleted')
      .reverse()
      .map((m) => m.fallback_text);
  };
  /** A group of the seeded user and a second one, both of whom installed the agent and accepted. */
  const group = async () => {
    const { user: bea, session_token } = mock.createUser({ display_name: 'Bea' });
    mock.installAgent({ user_id: bea.id, agent_id: seed.agent.id });
    const { invite } = await client.groups.invite({
      title: 'Trip',
      user_ids: [seed.user.id, bea.id],
      reason: 'Plan it',
    });
    await new UserClient({ sessionToken: seed.sessionToken, baseUrl }).invites.accept(invite.id);
    const accepted = await new UserClient({ sessionToken: session_token, baseUrl }).invites.accept(invite.id);
    await mock.idle();
    if (!accepted.conversation_id) throw new Error('the group was not created');
    return { conversationId: accepted.conversation_id, bea };
  };
  return { mock, model, seed, chat, chats, client, say, agentTexts, received, url, group, background };
}

describe('chat-sdk adapter', () => {
  it('streams the AI SDK answer to a mention over one request, exact in history', async () => {
    const { mock, model, seed, say, agentTexts } = await world();
    const answer = 'Oslo: sunny, 21 °C 🌤️ — enjoy the fjords 👨‍👩‍👧!';
    model.push({ text: answer, chunkSize: 3 });

    await say('@helper what is the weather in Oslo?');

    expect(await agentTexts()).toEqual([answer]);
    const sends = mock.requests.filter(
      (r) => r.method === 'POST' && r.path.startsWith(`/v1/conversations/${seed.conversationId}/messages`),
    );
    expect(sends).toHaveLength(1);
    expect(sends[0]?.query).toMatchObject({ stream: 'true' });
    // Never post-and-edit, never append: one streamed request carried the whole answer.
    expect(mock.requests.filter((r) => /\/append$|\/complete$/.test(r.path))).toEqual([]);
    expect(model.requests.at(-1)?.body.messages).toEqual([
      { role: 'user', content: '@helper what is the weather in Oslo?' },
    ]);
  });

  it('answers a follow-up in a subscribed thread, and a redelivered event posts nothing twice', async () => {
    const { say, agentTexts, received, url, mock } = await world();
    await say('@helper hi');
    await say('remember the milk');
    expect(await agentTexts()).toEqual(['You said: @helper hi', 'Noted: remember the milk']);

    // The service delivers the same event again (its webhook-id unchanged): answered, not re-run.
    const last = received.at(-1);
    if (!last) throw new Error('no delivery reached the bot');
    const again = await fetch(url, { method: 'POST', headers: last.headers, body: last.body });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ duplicate: true });
    await mock.idle();
    expect(await agentTexts()).toEqual(['You said: @helper hi', 'Noted: remember the milk']);
  });

  it('retries a delivery whose handler failed, and the retry replays the reply it had posted', async () => {
    const { chat, say, agentTexts, mock } = await world();
    let failures = 0;
    chat.onSubscribedMessage(async () => {
      if (failures++ === 0) throw new Error('a handler bug after the reply was posted');
    });
    await say('@helper hi');
    await say('book a table');
    // The first attempt answered 500: the service retries on its schedule (5 s first).
    expect(mock.deliveries.at(-1)?.status).toBe(500);
    await mock.clock.advance(5);
    await mock.idle();
    expect(mock.deliveries.at(-1)?.status).toBe(200);
    expect(await agentTexts()).toEqual(['You said: @helper hi', 'Noted: book a table']);
  });

  it('posts a card as text plus quick replies, and edit is not implemented', async () => {
    const { say, seed, client, chat } = await world();
    await say('@helper hi');
    await say('show me the menu');
    const { messages } = await client.conversations.listMessages(seed.conversationId, { limit: 1 });
    const card = messages[0];
    expect(card?.sender.id).toBe(seed.agent.id);
    expect(card?.parts?.map((part) => part.type)).toEqual(['text', 'actions']);
    expect(card?.parts?.[0]?.text).toBe('What next?\nPick one:');

    const adapter = chat.getAdapter('agentMessaging');
    const threadId = `ams:agent:${seed.conversationId}`;
    await expect(adapter.editMessage(threadId, card?.id ?? '', 'changed')).rejects.toBeInstanceOf(
      NotImplementedError,
    );
  });

  it('unsends within the two-minute window, and after it the service refuses with a typed error', async () => {
    const { say, seed, client, chat, mock, agentTexts } = await world();
    await say('@helper hi');
    await say('one');
    await say('two');
    const { messages } = await client.conversations.listMessages(seed.conversationId, { limit: 2 });
    const [newest, older] = messages;
    const adapter = chat.getAdapter('agentMessaging');
    const threadId = `ams:agent:${seed.conversationId}`;
    await adapter.deleteMessage(threadId, newest?.id ?? '');
    expect(await agentTexts()).toEqual(['You said: @helper hi', 'Noted: one']);
    await mock.clock.advance(3 * 60);
    const late = adapter.deleteMessage(threadId, older?.id ?? '');
    await expect(late).rejects.toSatisfy((error) => ApiError.is(error) && error.status >= 400);
  });

  it('in a group, answers only a message that mentions the agent, then follows the thread', async () => {
    const { say, agentTexts, group } = await world();
    const { conversationId, bea } = await group();
    await say('who is bringing snacks?', conversationId);
    expect(await agentTexts(conversationId)).toEqual([]);
    await say('@Helper can you plan the route?', conversationId, bea.id);
    await say('and lunch', conversationId);
    expect(await agentTexts(conversationId)).toEqual([
      'You said: @Helper can you plan the route?',
      'Noted: and lunch',
    ]);
  });

  it("calls a group a group whatever its thread id says: isDM is the service's word", async () => {
    const { chat, group } = await world();
    const { conversationId } = await group();
    const adapter = chat.getAdapter('agentMessaging');
    const forged = `ams:agent:${conversationId}`;
    expect(adapter.isDM?.(forged)).toBe(false);
    // Reading the thread through a forged id teaches the adapter nothing false.
    await adapter.fetchMessages(forged, { limit: 5 });
    expect(adapter.isDM?.(forged)).toBe(false);
    expect(await adapter.fetchThread(forged)).toMatchObject({ isDM: false });
    expect(adapter.isDM?.(`ams:group:${conversationId}`)).toBe(false);
  });

  it('hands a quick-reply click to onAction with its action id and value', async () => {
    const { say, seed, client, mock, agentTexts } = await world();
    await say('@helper hi');
    await say('menu please');
    const { messages } = await client.conversations.listMessages(seed.conversationId, { limit: 1 });
    const card = messages[0];
    const { message: click } = mock.clickAction({
      conversation_id: seed.conversationId,
      user_id: seed.user.id,
      message_id: card?.id ?? '',
      action_id: 'news',
    });
    await mock.idle();
    // The click's own message (the label the user saw) is not handled as a message: one answer, the action's.
    expect(click.parts?.[0]?.text).toBe('News');
    expect((await agentTexts()).slice(-2)).toEqual(['What next?\nPick one:', 'You picked news.']);
  });

  it('reacts, types, marks read, pages history both ways and describes the thread through the service', async () => {
    const { say, seed, chat, mock, client } = await world();
    await say('@helper hi');
    for (const text of ['one', 'two', 'three']) await say(text);
    const adapter = chat.getAdapter('agentMessaging');
    const threadId = `ams:agent:${seed.conversationId}`;
    const userMessage = (await client.conversations.listMessages(seed.conversationId)).messages.find(
      (m) => m.sender.id === seed.user.id,
    );
    const id = userMessage?.id ?? '';

    await adapter.addReaction(threadId, id, 'thumbs_up');
    await adapter.removeReaction(threadId, id, '🎉');
    await adapter.startTyping(threadId);
    await adapter.markAsRead(threadId, id);
    const wire = mock.requests.slice(-4).map((r) => [r.method, r.path, JSON.parse(r.body ?? 'null')]);
    expect(wire).toEqual([
      ['POST', `/v1/messages/${id}/reactions`, { emoji: '👍', action: 'add' }],
      ['POST', `/v1/messages/${id}/reactions`, { emoji: '🎉', action: 'remove' }],
      ['POST', `/v1/conversations/${seed.conversationId}/typing`, { state: 'start' }],
      ['POST', `/v1/conversations/${seed.conversationId}/read`, { message_id: id }],
    ]);

    // Eight messages: four from the user, four answers. Backward pages from the newest, forward from the first.
    const newest = await adapter.fetchMessages(threadId, { limit: 3 });
    expect(newest.messages.map((m) => m.text)).toEqual(['Noted: two', 'three', 'Noted: three']);
    const older = await adapter.fetchMessages(threadId, { limit: 3, cursor: newest.nextCursor });
    expect(older.messages.map((m) => m.text)).toEqual(['one', 'Noted: one', 'two']);
    const first = await adapter.fetchMessages(threadId, { limit: 5, direction: 'forward' });
    expect(first.messages.map((m) => [m.text, m.author.isMe])).toEqual([
      ['@helper hi', false],
      ['You said: @helper hi', true],
      ['one', false],
      ['Noted: one', true],
      ['two', false],
    ]);
    const rest = await adapter.fetchMessages(threadId, {
      limit: 5,
      direction: 'forward',
      cursor: first.nextCursor,
    });
    expect(rest.messages.map((m) => m.text)).toEqual(['Noted: two', 'three', 'Noted: three']);
    expect(rest.nextCursor).toBeUndefined();

    const info = await adapter.fetchThread(threadId);
    expect(info).toMatchObject({ id: threadId, channelId: threadId, isDM: true, channelName: 'Ada' });
    expect(adapter.isDM?.(threadId)).toBe(true);
  });

  it('answers 202 at once with ack immediately, and finishes the reply under waitUntil', async () => {
    const { say, mock, agentTexts, background } = await world(inMemory, 1, { ack: 'immediately' });
    await say('@helper hi');
    expect(mock.deliveries.at(-1)?.status).toBe(202);
    expect(background).toHaveLength(1);
    await Promise.all(background);
    expect(await agentTexts()).toEqual(['You said: @helper hi']);
  });

  it('refuses bad options by name before anything is sent', () => {
    expect(() =>
      createAgentMessagingAdapter({ apiKey: 'k', webhookSecret: 'whsec_x', agentId: 'usr_1' }),
    ).toThrow(/agentId/);
  });
});

describe('chat-sdk adapter on Redis (Chat SDK state and the bot store shared by two instances)', () => {
  let redis: TestRedis;
  const clients: { close(): Promise<unknown> }[] = [];
  const states: StateAdapter[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(states.map((state) => state.disconnect()));
    await Promise.all(clients.map((client) => client.close()));
    await redis.stop();
  });

  async function onRedis(): Promise<Backend> {
    const prefix = uniquePrefix('chat-sdk');
    const client = await connectClient(redis.url);
    clients.push(client);
    return {
      state: () => {
        const state = createRedisState({ url: redis.url, keyPrefix: `${prefix}chat` });
        states.push(state);
        return state;
      },
      store: () => createRedisStore({ client, prefix: `${prefix}bot:` }),
    };
  }

  it('answers a mention and a follow-up that land on different instances, each once', async () => {
    const { say, agentTexts } = await world(await onRedis(), 2);
    await say('@helper hi');
    // Round robin: this reaches the second instance, which answers it as a subscribed thread's message
    // only because the subscription made by the first is in Redis (alone, it would see a new DM mention).
    await say('remember the milk');
    expect(await agentTexts()).toEqual(['You said: @helper hi', 'Noted: remember the milk']);
  });

  it('a redelivery to the other instance is a duplicate there too', async () => {
    const { say, agentTexts, received, url, mock } = await world(await onRedis(), 2);
    await say('@helper hi');
    const first = received.at(-1);
    if (!first) throw new Error('no delivery reached the bot');
    const again = await fetch(url, { method: 'POST', headers: first.headers, body: first.body });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ duplicate: true });
    await mock.idle();
    expect(await agentTexts()).toEqual(['You said: @helper hi']);
  });
});
