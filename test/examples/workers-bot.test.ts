import { AgentClient } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import worker, { type Env, type ExecutionContext } from '../../examples/workers-bot.js';
import {
  agentMessages,
  deliveries,
  newAgent,
  requestsTo,
  serveFetch,
  startMock,
  verifyWebhook,
} from './setup.js';

describe('examples/workers-bot.ts', () => {
  it('answers each delivery at once with 202 and finishes the reply under waitUntil', async () => {
    const { mock, baseUrl } = await startMock();
    const agent = await newAgent(mock, baseUrl);
    const env: Env = {
      AMS_API_KEY: agent.apiKey,
      AMS_WEBHOOK_SECRET: agent.webhookSecret,
      AMS_BASE_URL: baseUrl,
    };
    const pending: Promise<unknown>[] = [];
    const ctx: ExecutionContext = { waitUntil: (promise) => void pending.push(promise) };
    // What the Workers runtime does: call the default export's fetch with the bindings and a context.
    const url = await serveFetch({ fetch: (request) => worker.fetch(request, env, ctx) });
    const client = new AgentClient({ apiKey: agent.apiKey, baseUrl });
    await verifyWebhook(client, agent.agentId, url);
    const { user, conversationId } = agent;

    const before = pending.length;
    mock.postUserMessage(conversationId, { user_id: user.id, text: 'hello, Worker' });
    await mock.idle();
    // 'immediately': even the webhook test is answered before any handler runs.
    expect(deliveries(mock)).toEqual([
      ['webhook.test', 202],
      ['message.received', 202],
    ]);
    expect(pending.length).toBeGreaterThan(before); // the handler was handed to waitUntil
    await Promise.all(pending);

    const replies = await agentMessages(client, conversationId, agent.agentId);
    expect(replies.map((reply) => reply.fallback_text)).toEqual(['You said: hello, Worker']);
    expect(requestsTo(mock, 'POST', /\/messages$/)).toHaveLength(1);
  });
});
