import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBot, registerAgent } from 'agent-messaging';
import { toNodeHandler } from 'agent-messaging/node';
import { createMockService } from 'agent-messaging/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createLoop, replay } from './harness.js';

async function* words(text: string) {
  for (const word of text.split(/(?<= )/)) yield word;
}

const REPLY = 'Echo: the quick brown fox jumps over the lazy dog. 🦊';

describe('the full loop, in process', () => {
  it('verifies the webhook, receives a message, streams a reply, and a redelivery does not reply twice', async () => {
    const loop = await createLoop();
    expect(loop.mock.deliveries.map((d) => [d.type, d.status])).toEqual([['webhook.test', 200]]);
    let runs = 0;
    loop.bot.on('message.received', async (ctx) => {
      runs += 1;
      await ctx.reply(words(`Echo: ${ctx.text}`));
      // The first run fails after its reply went out: the service must retry, and the retry must not
      // post a second reply.
      if (runs === 1) throw new Error('crash after replying');
    });
    loop.bot.onError(() => {});

    await loop.post('the quick brown fox jumps over the lazy dog. 🦊');
    await loop.mock.clock.advance(5);
    await loop.mock.idle();

    const received = loop.mock.deliveries.filter((d) => d.type === 'message.received');
    expect(received.map((d) => [d.attempt, d.status])).toEqual([
      [1, 500],
      [2, 200],
    ]);
    expect(new Set(received.map((d) => d.event_id)).size).toBe(1);
    expect(runs).toBe(2);
    const replies = await loop.agentMessages();
    expect(replies.map((message) => message.parts?.[0]?.text)).toEqual([REPLY]);
    expect(replies[0]?.status).toBe('sent');
  });

  it('does not reply twice when a bot that lost its dedupe memory gets the same delivery again', async () => {
    const loop = await createLoop();
    loop.record();
    await loop.post('hello');
    const [delivery] = loop.recorded;
    if (!delivery) throw new Error('no delivery recorded');
    // Two processes behind one URL, or one restarted: neither knows what the other handled.
    for (let i = 0; i < 2; i++) {
      const bot = createBot({ apiKey: loop.apiKey, webhookSecret: loop.secret, ...loop.connection });
      bot.on('message.received', (ctx) => ctx.reply('only once'));
      expect((await bot.fetch(replay(delivery))).status).toBe(200);
    }
    const replies = await loop.agentMessages();
    expect(replies.map((message) => message.parts?.[0]?.text)).toEqual(['only once']);
  });
});

describe('the full loop, over loopback', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function listen(server: Server): Promise<string> {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('serves the bot on node:http with toNodeHandler and replies over real HTTP, once', async () => {
    const mock = createMockService();
    const service = await mock.listen({ port: 0 });
    cleanups.push(service.close);
    let handler: ReturnType<typeof toNodeHandler> | undefined;
    const botUrl = await listen(createServer((req, res) => void handler?.(req, res)));
    const webhook_url = `${botUrl}/webhook`;

    const { agent, api_key, webhook_secret } = await registerAgent(
      { handle: 'loopback_bot', display_name: 'Loopback', webhook_url, capabilities: ['text'] },
      { baseUrl: service.baseUrl },
    );
    const bot = createBot({ apiKey: api_key, webhookSecret: webhook_secret, baseUrl: service.baseUrl });
    handler = toNodeHandler(bot);
    let runs = 0;
    bot.on('message.received', async (ctx) => {
      runs += 1;
      await ctx.reply(words(`Echo: ${ctx.text}`));
      if (runs === 1) throw new Error('crash after replying');
    });
    bot.onError(() => {});

    const verified = await bot.client.agents.setWebhook(agent.id, { webhook_url, capabilities: ['text'] });
    expect(verified.webhook_status).toBe('verified');

    // The user side goes through the mock's HTTP control surface, as another process would.
    const control = async <T = unknown>(path: string, body: unknown): Promise<T> => {
      const response = await fetch(`${service.baseUrl}/_mock${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.ok).toBe(true);
      return (await response.json()) as T;
    };
    const { user } = await control<{ user: { id: string } }>('/users', { display_name: 'Grace' });
    const install = { user_id: user.id, agent_id: agent.id };
    const { conversation_id } = await control<{ conversation_id: string }>('/installs', install);
    await control(`/conversations/${conversation_id}/user-messages`, {
      user_id: user.id,
      text: 'the quick brown fox jumps over the lazy dog. 🦊',
    });
    await mock.idle();
    await control('/clock/advance', { seconds: 5 });
    await mock.idle();

    const statuses = mock.deliveries.map((d) => [d.type, d.attempt, d.status]);
    expect(statuses).toEqual([
      ['webhook.test', 1, 200],
      ['message.received', 1, 500],
      ['message.received', 2, 200],
    ]);
    const { messages } = await bot.client.conversations.listMessages(conversation_id);
    const replies = messages.filter((message) => message.sender.id === agent.id);
    expect(replies.map((message) => message.parts?.[0]?.text)).toEqual([REPLY]);
  });
});
