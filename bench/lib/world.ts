// A scenario on the mock service behind its loopback door (real HTTP on 127.0.0.1): an active agent
// and users who installed it, each with their conversation. Set up through the public API.
import { AgentClient, type AgentClientOptions } from '../../src/index.js';
import { createMockService, type MockService, type MockServiceOptions } from '../../src/testing/index.js';

/** Everything a benchmark or a soak part works with. */
export interface World {
  mock: MockService;
  baseUrl: string;
  agentId: string;
  apiKey: string;
  webhookSecret: string;
  client: AgentClient;
  /** One conversation per user, in order. */
  conversations: string[];
  userIds: string[];
  close(): Promise<void>;
}

/** What a world is made with. */
export interface WorldOptions {
  /** Users, each with their own conversation with the agent (default 1; the first is the seed's). */
  users?: number;
  /** Options of the mock; webhook deliveries are answered 204 in-process unless `fetch` is given. */
  mock?: MockServiceOptions;
  /** Options of the agent's client, besides apiKey and baseUrl. */
  client?: Omit<AgentClientOptions, 'apiKey' | 'baseUrl'>;
  /** The agent's webhook URL (default `http://hook.bench/`). */
  webhookUrl?: string;
}

let worlds = 0;

/** Starts the mock on a free port and makes an active agent that `users` users installed. */
export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const mock = createMockService({ fetch: async () => new Response(null, { status: 204 }), ...options.mock });
  const server = await mock.listen({ port: 0 });
  const seed = await mock.seed({
    handle: `bench_${process.pid}_${++worlds}`,
    displayName: 'Bench',
    webhookUrl: options.webhookUrl ?? 'http://hook.bench/',
    capabilities: ['text'],
    userName: 'User 1',
  });
  const client = new AgentClient({ ...options.client, apiKey: seed.apiKey, baseUrl: server.baseUrl });
  const userIds = [seed.user.id];
  const conversations = [seed.conversationId];
  for (let i = 1; i < (options.users ?? 1); i++) {
    const { user } = mock.createUser({ display_name: `User ${i + 1}` });
    userIds.push(user.id);
    conversations.push(mock.installAgent({ user_id: user.id, agent_id: seed.agent.id }).conversation_id);
  }
  return {
    mock,
    baseUrl: server.baseUrl,
    agentId: seed.agent.id,
    apiKey: seed.apiKey,
    webhookSecret: seed.webhookSecret,
    client,
    conversations,
    userIds,
    close: server.close,
  };
}

/** Every message of the agent in a conversation, oldest first (all pages of the history). */
export async function agentMessages(world: World, conversationId: string) {
  const messages = [];
  for await (const message of world.client.conversations.history(conversationId)) {
    if (message.sender.id === world.agentId) messages.push(message);
  }
  return messages.reverse();
}

/** The text of a history message's first text part. */
export const textOf = (message: {
  parts?: { type: string; text?: string | undefined }[] | undefined;
}): string | undefined => message.parts?.find((part) => part.type === 'text')?.text;
