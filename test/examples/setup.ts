// Runs an example as its user would: the mock service on a loopback port, the example's server on
// its own loopback port, the users played through the mock's in-process control surface. Everything
// started here stops when the test ends.

import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AgentClient } from 'agent-messaging';
import { type FetchHandler, toNodeFetchHandler } from 'agent-messaging/node';
import { createMockService, type MockService, type RequestLogEntry } from 'agent-messaging/testing';
import { expect, onTestFinished } from 'vitest';
import { closeServer, webhookUrl } from '../../examples/support/try-on-mock.js';

/** A fresh mock service on 127.0.0.1, closed when the test ends. */
export async function startMock(): Promise<{ mock: MockService; baseUrl: string }> {
  const mock = createMockService();
  const { baseUrl, close } = await mock.listen({ port: 0 });
  onTestFinished(close);
  return { mock, baseUrl };
}

let handles = 0;

/**
 * A new agent on the mock (webhook at a placeholder until {@link verifyWebhook} points it at the
 * example's server) with a user, Ada, who installed it: the seed's credentials, as a bot's options.
 */
export async function newAgent(mock: MockService, baseUrl: string) {
  handles += 1;
  const seed = await mock.seed({
    handle: `example_${handles}`,
    displayName: 'Example',
    webhookUrl: 'http://127.0.0.1/unset',
  });
  // `options` is exactly what a bot takes; createBot refuses anything else, such as the agent id.
  const options = { apiKey: seed.apiKey, webhookSecret: seed.webhookSecret, baseUrl };
  const { user, sessionToken, conversationId } = seed;
  return { agentId: seed.agent.id, options, ...options, user, sessionToken, conversationId };
}

/** Stops a server the example started when the test ends; answers its webhook URL. */
export function stopAfterTest(server: Server, path = '/webhook'): string {
  onTestFinished(() => closeServer(server));
  return webhookUrl(server, path);
}

/** Serves a fetch handler on a loopback port until the test ends; answers its webhook URL. */
export async function serveFetch(handler: FetchHandler): Promise<string> {
  const server = createServer(toNodeFetchHandler(handler)).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return stopAfterTest(server);
}

/** Points the agent's webhook at the example's server; the service's signed test must pass. */
export async function verifyWebhook(client: AgentClient, agentId: string, webhook_url: string) {
  const answer = await client.agents.setWebhook(agentId, { webhook_url, capabilities: ['text', 'file'] });
  expect(answer.webhook_status).toBe('verified');
}

/** A verified user who installed the agent, and their conversation with it. */
export function userWithAgent(mock: MockService, agentId: string, display_name = 'Ada') {
  const { user, session_token } = mock.createUser({ display_name });
  const { conversation_id } = mock.installAgent({ user_id: user.id, agent_id: agentId });
  return { user, sessionToken: session_token, conversationId: conversation_id };
}

/** The `/v1` requests the mock logged with this method and a path matching `path`. */
export function requestsTo(mock: MockService, method: string, path: RegExp): RequestLogEntry[] {
  return mock.requests.filter((entry) => entry.method === method && path.test(entry.path));
}

/** The agent's messages in a conversation, oldest first. */
export async function agentMessages(client: AgentClient, conversationId: string, agentId: string) {
  const { messages } = await client.conversations.listMessages(conversationId);
  return messages.filter((message) => message.sender.id === agentId).reverse();
}

/** The types and answers of the webhook deliveries the mock made. */
export function deliveries(mock: MockService): [string, number | null][] {
  return mock.deliveries.map((delivery) => [delivery.type, delivery.status]);
}
