import { AgentClient } from 'agent-messaging';
import { createMockService, type MockService, type RequestLogEntry } from 'agent-messaging/testing';
import { mswHandlers } from 'agent-messaging/testing/msw';
import { setupServer } from 'msw/node';

/** An active agent with a user's conversation, on the mock behind one door. */
export interface World {
  mock: MockService;
  baseUrl: string;
  client: AgentClient;
  agentId: string;
  apiKey: string;
  userId: string;
  conversationId: string;
  close(): Promise<void>;
}

/** How the client reaches the mock: a real port (streamed bodies go over the wire), or msw in-process. */
export type Door = 'loopback' | 'msw';

let handles = 0;

/** Starts the mock behind the door and makes an agent that a user installed. */
export async function startWorld(door: Door = 'loopback'): Promise<World> {
  // Webhook deliveries (message.received after a user posts) are answered 204 without a network hop.
  const mock = createMockService({ fetch: async () => new Response(null, { status: 204 }) });
  const server = door === 'loopback' ? await mock.listen({ port: 0 }) : mswServer(mock);
  const seed = await mock.seed({
    handle: `stream_${process.pid}_${++handles}`,
    displayName: 'Streamer',
    capabilities: ['text'],
  });
  const client = new AgentClient({ apiKey: seed.apiKey, baseUrl: server.baseUrl });
  return {
    mock,
    baseUrl: server.baseUrl,
    client,
    agentId: seed.agent.id,
    apiKey: seed.apiKey,
    userId: seed.user.id,
    conversationId: seed.conversationId,
    close: server.close,
  };
}

function mswServer(mock: MockService) {
  const server = setupServer(...mswHandlers(mock));
  server.listen({ onUnhandledFrame: 'error' });
  return { baseUrl: mock.baseUrl, close: async () => server.close() };
}

/** The requests logged after the first `from` entries. */
export const requestsSince = (world: World, from: number): RequestLogEntry[] =>
  world.mock.requests.slice(from);

/** The agent's messages in the conversation, oldest first. */
export async function agentMessages(world: World) {
  const { messages } = await world.client.conversations.listMessages(world.conversationId, { limit: 100 });
  return messages.filter((message) => message.sender.id === world.agentId).reverse();
}

/** The text of a message's first text part. */
export const textOf = (message: { parts?: { type: string; text?: string | undefined }[] | undefined }) =>
  message.parts?.find((part) => part.type === 'text')?.text;

/** `count` small pieces of text, with multi-byte characters among them. */
export function pieces(count: number): string[] {
  return Array.from({ length: count }, (_, i) => (i % 10 === 9 ? `é${i}🙂 ` : `w${i} `));
}
