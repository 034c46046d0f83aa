import { describe, expect, it } from 'vitest';
import { createApp, createEchoBot } from '../../examples/hono-bot.js';
import {
  agentMessages,
  deliveries,
  newAgent,
  requestsTo,
  serveFetch,
  startMock,
  verifyWebhook,
} from './setup.js';

describe('examples/hono-bot.ts', () => {
  it('answers deliveries through the Hono route with bot.fetch', async () => {
    const { mock, baseUrl } = await startMock();
    const agent = await newAgent(mock, baseUrl);
    const bot = createEchoBot(agent.options);
    const app = createApp(bot);
    // As the example runs on Node: the app's fetch behind node:http.
    const url = await serveFetch({ fetch: async (request) => app.fetch(request) });
    await verifyWebhook(bot.client, agent.agentId, url);
    const { user, conversationId } = agent;

    mock.postUserMessage(conversationId, { user_id: user.id, text: 'hello, Hono' });
    await mock.idle();

    expect(deliveries(mock)).toEqual([
      ['webhook.test', 200],
      ['message.received', 200],
    ]);
    const replies = await agentMessages(bot.client, conversationId, agent.agentId);
    expect(replies.map((reply) => reply.fallback_text)).toEqual(['You said: hello, Hono']);
    expect(requestsTo(mock, 'POST', /\/messages$/)).toHaveLength(1);
  });

  it('serves the app’s own routes beside the webhook, which only takes POST', async () => {
    const { mock, baseUrl } = await startMock();
    const app = createApp(createEchoBot((await newAgent(mock, baseUrl)).options));

    const home = await app.request('/');
    const get = await app.request('/webhook');

    expect([home.status, await home.text()]).toEqual([200, 'ok']);
    expect(get.status).toBe(404);
  });
});
