// A fresh scenario per test: the mock behind one door (msw or loopback HTTP), an active agent, a user
// who installed it, their conversation, and clients that record their debug lines and raw requests.

import { AgentClient, type LogFields, UserClient } from 'agent-messaging';
import { createMockService, type MockService, type RequestLogEntry } from 'agent-messaging/testing';
import { mswHandlers } from 'agent-messaging/testing/msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, beforeEach } from 'vitest';

/** How the client reaches the mock. */
export type Door = 'msw' | 'loopback';

/** One debug line a client wrote. */
export interface LogLine {
  message: string;
  fields: LogFields;
}

/** Everything a test needs; filled anew before every test. */
export interface World {
  mock: MockService;
  baseUrl: string;
  /** The msw server (msw door only), for `server.use(...)` overrides. */
  server: ReturnType<typeof setupServer> | undefined;
  agentId: string;
  apiKey: string;
  client: AgentClient;
  userId: string;
  sessionToken: string;
  user: UserClient;
  conversationId: string;
  /** Debug lines of `client` and `user`. */
  lines: LogLine[];
  /** Every request `client` and `user` handed to fetch (uploads included), with real headers. */
  fetched: Request[];
  /** `/v1` requests the mock logged since the scenario was set up. */
  requests(): RequestLogEntry[];
  /** Options for another client on the same mock, recording into the same lists. */
  options(): { baseUrl: string; logger: (message: string, fields: LogFields) => void; fetch: typeof fetch };
}

let handles = 0;

/** Registers the hooks of one test file and answers the world they keep up to date. */
export function useWorld(door: Door): World {
  // The mock's webhook deliveries are answered without a network hop: 500 for a URL with `/failing`.
  const mock = createMockService({
    fetch: async (request) => new Response(null, { status: request.url.includes('/failing') ? 500 : 204 }),
  });
  const world = { mock, server: undefined, lines: [], fetched: [] } as unknown as World;
  let close: (() => Promise<void>) | undefined;
  let since = 0;

  beforeAll(async () => {
    if (door === 'msw') {
      world.server = setupServer(...mswHandlers(mock));
      world.server.listen({ onUnhandledFrame: 'error' });
      world.baseUrl = mock.baseUrl;
    } else {
      const served = await mock.listen({ port: 0 });
      world.baseUrl = served.baseUrl;
      close = served.close;
    }
  });
  afterAll(async () => {
    world.server?.close();
    await close?.();
  });
  beforeEach(async () => {
    world.server?.resetHandlers();
    await mock.idle();
    mock.reset();
    world.lines.length = 0;
    world.fetched.length = 0;
    world.options = () => ({
      baseUrl: world.baseUrl,
      logger: (message, fields) => world.lines.push({ message, fields }),
      fetch: (input, init) => {
        world.fetched.push(input instanceof Request ? input.clone() : new Request(input, init));
        return globalThis.fetch(input, init);
      },
    });
    const seed = await mock.seed({
      handle: `client_${process.pid}_${++handles}`,
      webhookUrl: 'https://bot.example/hook',
    });
    world.agentId = seed.agent.id;
    world.apiKey = seed.apiKey;
    world.client = new AgentClient({ apiKey: seed.apiKey, ...world.options() });
    world.userId = seed.user.id;
    world.sessionToken = seed.sessionToken;
    world.user = new UserClient({ sessionToken: seed.sessionToken, ...world.options() });
    world.conversationId = seed.conversationId;
    since = mock.requests.length;
    world.lines.length = 0;
    world.fetched.length = 0;
  });
  world.requests = () => mock.requests.slice(since);
  return world;
}

/** The parsed JSON body of a logged request. */
export const bodyOf = (entry: RequestLogEntry | undefined): Record<string, unknown> =>
  JSON.parse(entry?.body ?? 'null');

/** `value` rejected; answers the error so the test can look at it. */
export async function rejectionOf(value: PromiseLike<unknown>): Promise<unknown> {
  try {
    await value;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, and it succeeded');
}
