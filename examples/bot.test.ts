// Run: `npx vitest run examples/bot.test.ts`
//
// How to test your own bot: `agent-messaging/testing` holds the whole service in memory. The bot's
// client calls the mock, the mock delivers real signed webhooks to the bot, and the test plays the
// user and reads the conversation back. No ports, no network, no waiting on timers.

import type { Bot } from 'agent-messaging';
import {
  createMockService,
  generateWebhookSecret,
  type MockService,
  type Seed,
  signWebhook,
} from 'agent-messaging/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { createEchoBot } from './echo-bot.js';

describe('the echo bot', () => {
  let mock: MockService;
  let bot: Bot;
  let world: Seed;

  beforeEach(async () => {
    // The mock sends its webhooks straight to the bot; the bot's client talks straight to the mock.
    mock = createMockService({ fetch: (request) => bot.fetch(request) });
    // An active agent, a user (Ada) who installed it, and their conversation, with the credentials.
    world = await mock.seed({ handle: 'echo', displayName: 'Echo' });
    const { apiKey, webhookSecret } = world;
    // The mock is also a fetch: the bot's client talks to it in process.
    bot = createEchoBot({ apiKey, webhookSecret, baseUrl: mock.baseUrl, fetch: mock.fetch });
  });

  /** Ada says `text`; resolves once the bot has handled it. */
  async function say(text: string) {
    const { user, conversationId, agent } = world;
    const { message } = mock.postUserMessage(conversationId, { user_id: user.id, text });
    await mock.idle(); // every delivery settled, so the handler finished
    const { messages } = await bot.client.conversations.listMessages(conversationId);
    return { sent: message, replies: messages.filter((m) => m.sender.id === agent.id) };
  }

  it('echoes what the user said, as a reply to their message', async () => {
    const { sent, replies } = await say('hello');

    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({
      fallback_text: 'You said: hello',
      reply_to: { message_id: sent.id },
      status: 'sent',
    });
  });

  it('answers the service 200, and sends exactly one message per user message', async () => {
    await say('once');

    const received = mock.deliveries.filter((delivery) => delivery.type === 'message.received');
    expect(received.map((delivery) => delivery.status)).toEqual([200]);
    const sends = mock.requests.filter(
      (request) => request.method === 'POST' && request.path.endsWith('/messages'),
    );
    expect(sends).toHaveLength(1);
  });

  it('accepts a delivery signed with its webhook secret and refuses any other', async () => {
    // signWebhook signs a payload of your own, for a unit test of bot.fetch alone.
    const event = {
      schema: 'svc.event.v1',
      eventId: 'evt_1',
      type: 'webhook.test',
      createdAt: new Date().toISOString(),
      agentId: world.agent.id,
    };
    const payload = JSON.stringify(event);
    const deliver = async (signingSecret: string) => {
      const headers = await signWebhook({ id: event.eventId, payload, secret: signingSecret });
      const request = new Request('https://bot.example/webhook', { method: 'POST', headers, body: payload });
      return (await bot.fetch(request)).status;
    };

    expect(await deliver(generateWebhookSecret())).toBe(401);
    expect(await deliver(world.webhookSecret)).toBe(200);
  });
});
