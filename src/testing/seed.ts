// mock.seed(): the world almost every test, example and benchmark starts from (an active agent, a
// user who installed it, their conversation), made in one call instead of seven.
import { type Agent, AgentClient, type RegisterAgentRequest, registerAgent } from '../index.js';
import { agentChanged } from './live-feed.js';
import type { MockService } from './mock-service.js';
import type { MockWorld } from './state.js';
import { createUser, installAgent } from './users.js';

/** Options of `mock.seed()`; every one has a default. */
export interface SeedOptions {
  /** The agent's handle (3 to 32 of a-z, 0-9, _). @default a new `agent_<n>` */
  handle?: string;
  /** The agent's display name. @default 'Helper' */
  displayName?: string;
  /** Where the service delivers the agent's webhooks. @default 'http://bot.test/webhook' */
  webhookUrl?: string;
  /** The agent's capabilities. @default ['text', 'file'] */
  capabilities?: RegisterAgentRequest['capabilities'];
  /** The display name of the user who installs the agent. @default 'Ada' */
  userName?: string;
  /**
   * true sends the signed `webhook.test` to `webhookUrl` (through the mock's `fetch` option) as
   * `setWebhook` does, and rejects with its 422 unless a 2xx answers; the bot must be listening.
   * false (the default) marks the webhook verified without a delivery, so the bot can be made after
   * the seed from the credentials it returns.
   * @default false
   */
  verifyWebhook?: boolean;
}

/** What `mock.seed()` made: the agent's credentials, the user's session, and their conversation. */
export interface Seed {
  /** The agent as the service shows it: `status: 'active'`, `webhook_status: 'verified'`. */
  agent: Agent;
  /** The agent's bearer token, for `AgentClient` and `createBot`. */
  apiKey: string;
  /** The agent's `whsec_` secret, for `createBot` and `verifyWebhook`. */
  webhookSecret: string;
  /** The user who installed the agent. */
  user: { id: string; display_name: string; verified: boolean };
  /** The user's session token, for `UserClient`. */
  sessionToken: string;
  /** The conversation (kind `agent`) between the user and the agent. */
  conversationId: string;
}

let seeds = 0;

/**
 * Registers an agent through the mock's own `POST /v1/agents` (so the request log shows it), makes
 * its webhook verified, creates a user who installs it, and answers their conversation.
 */
export async function seedWorld(
  world: MockWorld,
  connection: Pick<MockService, 'baseUrl' | 'fetch'>,
  options: SeedOptions = {},
): Promise<Seed> {
  const webhookUrl = options.webhookUrl ?? 'http://bot.test/webhook';
  const capabilities: RegisterAgentRequest['capabilities'] = options.capabilities ?? ['text', 'file'];
  const registered = await registerAgent(
    {
      handle: options.handle ?? `agent_${++seeds}`,
      display_name: options.displayName ?? 'Helper',
      webhook_url: webhookUrl,
      capabilities,
    },
    connection,
  );
  const { api_key: apiKey, webhook_secret: webhookSecret } = registered;
  if (options.verifyWebhook) {
    const client = new AgentClient({ apiKey, ...connection });
    await client.agents.setWebhook(registered.agent.id, { webhook_url: webhookUrl });
  } else {
    const record = world.state.agents.get(registered.agent.id);
    if (!record) throw new Error(`mock.seed: agent ${registered.agent.id} vanished (a reset during seed?)`);
    record.status = 'active';
    record.webhook_status = 'verified';
    agentChanged(world, record, 'updated');
  }
  const agent = { ...registered.agent, status: 'active', webhook_status: 'verified' } as Agent;
  const { user, session_token: sessionToken } = createUser(world, {
    display_name: options.userName ?? 'Ada',
  });
  const { conversation_id: conversationId } = installAgent(world, { user_id: user.id, agent_id: agent.id });
  return { agent, apiKey, webhookSecret, user, sessionToken, conversationId };
}
