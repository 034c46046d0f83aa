// Run: `npx vitest run examples/bot.test.ts`
//
// How to test your own bot: `agent-messaging/testing` holds the whole service in memory. The bot's
// client calls the mock, the mock delivers real signed webhooks to the bot, and the test plays the
// user and reads the conversation back. No ports, no network, no waiting on timers.

import { type Bot, registerAgent } from 'agent-messaging';
import {
  createMockService,
  generateWebhookSecret,
  type MockService,
  signWebhook,
} from 'agent-messaging/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { createEchoBot } from './echo-bot.js';

describe('the echo bot', () => {
  let mock: MockService;
  let bot: Bot;
  let agentId: string;
  let secret: string;

  beforeEach(async () => {
    // The mock sends its webhooks straight to the bot; the bot's client talks straight to the mock.
    mock = createMockService({ fetch: (request) => bot.fetch(request) });
    const fetch = mock.fetch; // the mock is also a fetch: the bot's client talks to it in process
    const webhook_url = 'https://bot.example/webhook'; // never dialled: deliveries go to bot.fetch
    const registered = await registerAgent(
      { handle: 'echo', display_name: 'Echo', webhook_url, capabilities: ['text'] },
      { baseUrl: mock.baseUrl, fetch },
    );
    agentId = registered.agent.id;
    secret = registered.webhook_secret;
    bot = createEchoBot({ apiKey: registered.api_key, webhookSecret: secret, baseUrl: mock.baseUrl, fetch });
    await bot.client.agents.setWebhook(agentId, { webhook_url, capabilities: ['text'] });
  });

  /** A user who installed the bot says `text`; resolves once the bot has handled it. */
  async function say(text: string) {
    const { user } = mock.createUser({ display_name: 'Ada' });
    const { conversation_id } = mock.installAgent({ user_id: user.id, agent_id: agentId });
    const { message } = mock.postUserMessage(conversation_id, { user_id: user.id, text });
    await mock.idle(); // every delivery settled, so the handler finished
    const { messages } = await bot.client.conversations.listMessages(conversation_id);
    return { sent: message, replies: messages.filter((m) => m.sender.id === agentId) };
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
      agentId,
    };
    const payload = JSON.stringify(event);
    const deliver = async (signingSecret: string) => {
      const headers = await signWebhook({ id: event.eventId, payload, secret: signingSecret });
      const request = new Request('https://bot.example/webhook', { method: 'POST', headers, body: payload });
      return (await bot.fetch(request)).status;
    };

    expect(await deliver(generateWebhookSecret())).toBe(401);
    expect(await deliver(secret)).toBe(200);
  });
});
