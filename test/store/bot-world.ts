// The world the Redis bot tests start from: a mock whose webhooks go to `route(request)`, seeded with
// an agent, a user and their conversation, and the agent's replies read back from history.
import { AgentClient } from 'agent-messaging';
import { createMockService, type MockService } from 'agent-messaging/testing';

/** A mock whose webhooks go to `route(request)`, seeded with an agent, a user and their conversation. */
export async function routedWorld(route: (request: Request) => Promise<Response>) {
  const mock: MockService = createMockService({ fetch: (request) => route(request) });
  const seed = await mock.seed();
  const connection = { baseUrl: mock.baseUrl, fetch: mock.fetch };
  const agent = new AgentClient({ apiKey: seed.apiKey, ...connection });
  /** The agent's reply texts, oldest first. */
  const replies = async () => {
    const texts: string[] = [];
    for await (const message of agent.conversations.history(seed.conversationId)) {
      if (message.sender.id === seed.agent.id)
        texts.push(message.parts?.find((part) => part.type === 'text')?.text ?? '');
    }
    return texts.reverse();
  };
  return { mock, seed, connection, replies };
}
