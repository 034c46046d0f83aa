import { signWebhook } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
import { createEchoBot, serveBot } from '../../examples/echo-bot.js';
import {
  agentMessages,
  deliveries,
  newAgent,
  requestsTo,
  startMock,
  stopAfterTest,
  verifyWebhook,
} from './setup.js';

describe('examples/echo-bot.ts', () => {
  it('answers a user message with the echoed text, as a reply to it', async () => {
    const { mock, baseUrl } = await startMock();
    const agent = await newAgent(mock, baseUrl);
    const bot = createEchoBot(agent.options);
    const url = stopAfterTest(await serveBot(bot, 0, '127.0.0.1'));
    await verifyWebhook(bot.client, agent.agentId, url);
    const { user, conversationId } = agent;

    const { message } = mock.postUserMessage(conversationId, { user_id: user.id, text: 'hi there' });
    await mock.idle();

    const replies = await agentMessages(bot.client, conversationId, agent.agentId);
    expect(replies.map((reply) => [reply.fallback_text, reply.reply_to?.message_id])).toEqual([
      ['You said: hi there', message.id],
    ]);
    expect(deliveries(mock)).toEqual([
      ['webhook.test', 200],
      ['message.received', 200],
    ]);
    const sends = requestsTo(mock, 'POST', /^\/v1\/conversations\/[^/]+\/messages$/);
    expect(sends).toHaveLength(1);
    expect(sends[0]?.headers['idempotency-key']).toMatch(/.{8,}/);
    expect(JSON.parse(sends[0]?.body ?? '')).toMatchObject({
      content: [{ type: 'text', text: 'You said: hi there' }],
      replyToMessageId: message.id,
    });
  });

  it('refuses a delivery signed with another secret, and sends nothing', async () => {
    const { mock, baseUrl } = await startMock();
    const agent = await newAgent(mock, baseUrl);
    const url = stopAfterTest(await serveBot(createEchoBot(agent.options), 0, '127.0.0.1'));
    const other = await newAgent(mock, baseUrl);
    const payload = JSON.stringify({
      schema: 'svc.event.v1',
      eventId: 'evt_forged',
      type: 'message.received',
      createdAt: new Date().toISOString(),
      agentId: agent.agentId,
    });
    const headers = await signWebhook({ id: 'evt_forged', payload, secret: other.webhookSecret });

    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: payload,
    });

    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: 'no_matching_signature' } });
    expect(requestsTo(mock, 'POST', /\/messages$/)).toEqual([]);
  });
});
