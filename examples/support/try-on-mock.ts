// Scaffolding that lets every example run against `npm run mock` with no account: it registers a
// throwaway agent, points its webhook at the bot, and plays the users through the mock's `/_mock`
// control surface. On the real service an agent is registered once and users come by themselves:
// copy the examples, not this file.

import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AgentClient, createBot, registerAgent } from 'agent-messaging';
import { toNodeHandler } from 'agent-messaging/node';
import { mockSchemas } from 'agent-messaging/testing';
import type * as z from 'zod/mini';

/** Where `npm run mock` serves the mock service. */
export const MOCK_URL = 'http://127.0.0.1:4010';

/** What a bot or a client needs: the agent's credentials and the service's address. */
export interface AgentCredentials {
  apiKey: string;
  webhookSecret: string;
  baseUrl: string;
}

/**
 * The agent ids of throwaway agents registered on the mock, by their credentials: kept beside them, not
 * in them, since the credentials are passed to `createBot` as they are (it refuses unknown options).
 */
const throwawayAgentIds = new WeakMap<AgentCredentials, string>();

/** The agent id of a throwaway agent registered on the mock; undefined for an agent from the env. */
export const throwawayAgentId = (credentials: AgentCredentials) => throwawayAgentIds.get(credentials);

const isLoopback = (url: string) => ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname);

/**
 * The agent from AMS_API_KEY and AMS_WEBHOOK_SECRET; without them, a throwaway agent registered on the
 * mock at AMS_BASE_URL (default {@link MOCK_URL}).
 */
export async function credentialsFromEnv(handle: string, env = process.env): Promise<AgentCredentials> {
  const baseUrl = env.AMS_BASE_URL || MOCK_URL;
  if (env.AMS_API_KEY && env.AMS_WEBHOOK_SECRET) {
    return { apiKey: env.AMS_API_KEY, webhookSecret: env.AMS_WEBHOOK_SECRET, baseUrl };
  }
  return registerOnMock(handle, baseUrl);
}

/** Registers a throwaway agent on the mock; refuses any service that is not on loopback. */
export async function registerOnMock(handle: string, baseUrl: string): Promise<AgentCredentials> {
  if (!isLoopback(baseUrl)) {
    throw new Error(`Set AMS_API_KEY and AMS_WEBHOOK_SECRET (from registerAgent) to use ${baseUrl}.`);
  }
  const { agent, api_key, webhook_secret } = await registerAgent(
    {
      // Handles are unique: a fresh one on every run.
      handle: `${handle}_${Math.random().toString(36).slice(2, 10)}`,
      display_name: handle,
      // A placeholder: the bot's real URL is set with setWebhook once the bot listens.
      webhook_url: 'http://127.0.0.1/webhook',
      capabilities: ['text', 'file'],
    },
    { baseUrl },
  );
  const credentials = { apiKey: api_key, webhookSecret: webhook_secret, baseUrl };
  throwawayAgentIds.set(credentials, agent.id);
  return credentials;
}

/** The mock's user side, over its HTTP control surface (`npm run mock` runs in another process). */
export function mockControl(baseUrl: string) {
  const post = async <S extends z.ZodMiniType>(
    path: string,
    body: unknown,
    schema: S,
  ): Promise<z.output<S>> => {
    const response = await fetch(`${baseUrl}/_mock${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      throw new Error(`POST /_mock${path} answered ${response.status}: ${await response.text()}`);
    }
    return schema.parse(await response.json());
  };
  return {
    /** A verified user, and the session token a UserClient takes. */
    createUser: (display_name: string) => post('/users', { display_name }, mockSchemas.CreateUserResponse),
    /** The user installs the agent; answers their conversation with it. */
    install: (user_id: string, agent_id: string) =>
      post('/installs', { user_id, agent_id }, mockSchemas.InstallResponse),
    /** The user posts; the service delivers `message.received` to the agent. */
    say: (conversationId: string, user_id: string, text: string) =>
      post(
        `/conversations/${conversationId}/user-messages`,
        { user_id, text },
        mockSchemas.UserMessageResponse,
      ),
  };
}

/** The URL of a listening server's webhook route, on loopback. */
export function webhookUrl(server: Server, path = '/webhook'): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
}

/**
 * For a bot running on a throwaway agent: points the agent's webhook at `url` (the service verifies
 * it), makes a user who installs the agent and says `text`, and prints the bot's first answer once it
 * is complete. The bot keeps running; the printed curl says more.
 */
export async function chatOnMock(
  client: AgentClient,
  agent: AgentCredentials,
  url: string,
  text: string,
): Promise<void> {
  const agentId = throwawayAgentIds.get(agent);
  if (!agentId) return;
  await client.agents.setWebhook(agentId, { webhook_url: url, capabilities: ['text'] });
  const mock = mockControl(agent.baseUrl);
  const { user } = await mock.createUser('Ada');
  const { conversation_id } = await mock.install(user.id, agentId);
  console.log(`Ada: ${text}`);
  await mock.say(conversation_id, user.id, text);
  // Read back as the user would see it: the bot's first message once it is sent whole.
  for (let waited = 0; waited < 30_000; waited += 100) {
    const { messages } = await client.conversations.listMessages(conversation_id, { limit: 5 });
    const reply = messages.find((message) => message.sender.id === agentId && message.status === 'sent');
    if (reply) {
      console.log(`Bot: ${reply.fallback_text ?? ''}`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const body = JSON.stringify({ user_id: user.id, text: 'hi again' });
  console.log(`Say more (Ctrl-C stops the bot):`);
  console.log(`  curl -s ${agent.baseUrl}/_mock/conversations/${conversation_id}/user-messages \\`);
  console.log(`    -H 'content-type: application/json' -d '${body}'`);
}

/** An agent with a verified webhook (an empty bot on a loopback port) and a user who installed it. */
export interface DevAgent {
  client: AgentClient;
  agentId: string;
  user: { id: string; session_token: string };
  /** The user's conversation with the agent. */
  conversationId: string;
  /** Stops the agent's webhook receiver. */
  close(): Promise<void>;
}

/** Sets up a {@link DevAgent} on the mock, for the examples that only call the API. */
export async function devAgentOnMock(
  handle: string,
  options: { baseUrl?: string; userMessages?: number } = {},
): Promise<DevAgent> {
  const { baseUrl = process.env.AMS_BASE_URL || MOCK_URL, userMessages = 0 } = options;
  const agent = await registerOnMock(handle, baseUrl);
  const agentId = throwawayAgentIds.get(agent) as string;
  const bot = createBot(agent); // answers the webhook test by itself
  const server = createServer(toNodeHandler(bot)).listen(0, '127.0.0.1');
  await once(server, 'listening');
  await bot.client.agents.setWebhook(agentId, {
    webhook_url: webhookUrl(server),
    capabilities: ['text', 'file'],
  });
  const mock = mockControl(agent.baseUrl);
  const { user, session_token } = await mock.createUser('Ada');
  const { conversation_id } = await mock.install(user.id, agentId);
  for (let i = 1; i <= userMessages; i++) await mock.say(conversation_id, user.id, `Message ${i}`);
  return {
    client: bot.client,
    agentId,
    user: { id: user.id, session_token },
    conversationId: conversation_id,
    close: () => closeServer(server),
  };
}

/** Stops a node:http server, ending its idle keep-alive connections. */
export async function closeServer(server: Server): Promise<void> {
  const closed = once(server, 'close');
  server.close();
  server.closeAllConnections();
  await closed;
}
