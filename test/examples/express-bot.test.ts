import { describe, expect, it } from 'vitest';
import { createApp, createEchoBot, serveApp } from '../../examples/express-bot.js';
import {
  agentMessages,
  deliveries,
  newAgent,
  requestsTo,
  startMock,
  stopAfterTest,
  verifyWebhook,
} from './setup.js';

describe('examples/express-bot.ts', () => {
  it('verifies and answers deliveries on the express.raw webhook route', async () => {
    const { mock, baseUrl } = await startMock();
    const agent = await newAgent(mock, baseUrl);
    const bot = createEchoBot(agent.options);
    const url = stopAfterTest(await serveApp(createApp(bot), 0, '127.0.0.1'));
    await verifyWebhook(bot.client, agent.agentId, url);
    const { user, conversationId } = agent;

    const { message } = mock.postUserMessage(conversationId, { user_id: user.id, text: 'héllo, Express 🚂' });
    await mock.idle();

    // The signature covers the exact bytes: non-ASCII text proves the raw body reached the bot intact.
    expect(deliveries(mock)).toEqual([
      ['webhook.test', 200],
      ['message.received', 200],
    ]);
    const replies = await agentMessages(bot.client, conversationId, agent.agentId);
    expect(replies.map((reply) => reply.fallback_text)).toEqual(['You said: héllo, Express 🚂']);
    const [send] = requestsTo(mock, 'POST', /^\/v1\/conversations\/[^/]+\/messages$/);
    expect(JSON.parse(send?.body ?? '')).toMatchObject({ replyToMessageId: message.id });
  });

  it('keeps parsing JSON for the rest of the app next to the webhook route', async () => {
    const { mock, baseUrl } = await startMock();
    const agent = await newAgent(mock, baseUrl);
    const url = stopAfterTest(
      await serveApp(createApp(createEchoBot(agent.options)), 0, '127.0.0.1'),
      '/healthz',
    );

    const response = await fetch(url);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });
});
