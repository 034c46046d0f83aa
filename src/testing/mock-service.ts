// createMockService: one world (state, clock, streams, webhooks) behind one entry (service.ts), with
// the in-process control surface and the doors onto that entry: mock.fetch (and the msw handlers
// over it) and the loopback HTTP server.
import type { FaultSpec } from '../schemas/mock-control.js';
import { MockClock } from './clock.js';
import { advanceClock, resetWorld } from './control.js';
import { MockEventBus } from './event-bus.js';
import { clearFaults, injectFault } from './faults.js';
import { fromRequest, toResponse } from './http.js';
import { handlersWith, loadMswHttp } from './msw-door.js';
import { clickAction } from './postbacks.js';
import { snapshotRequests } from './request-log.js';
import { seedWorld } from './seed.js';
import { serveRequest } from './service.js';
import { takeSnapshot } from './snapshot.js';
import { createState } from './state.js';
import { StreamHub } from './stream-hub.js';
import type { MockServer, MockService, MockServiceOptions } from './types.js';
import { createUser, installAgent, postUserMessage } from './users.js';
import { WebhookDispatcher } from './webhook-delivery.js';
import type { MockWorld } from './world.js';

const DEFAULT_BASE_URL = 'http://ams.test';

/**
 * The whole Agent Messaging Service in memory, for tests and local development.
 *
 * @example
 * const mock = createMockService();
 * const server = setupServer(...mock.handlers);            // msw, in process
 * const { baseUrl, close } = await mock.listen({ port: 0 }); // or real HTTP on 127.0.0.1
 */
export function createMockService(options: MockServiceOptions = {}): MockService {
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const world: MockWorld = {
    state: createState(),
    clock: new MockClock(options.now === undefined ? undefined : new Date(options.now)),
    options: {
      fetch: () => options.fetch ?? ((request) => globalThis.fetch(request)),
      keepAliveMs: options.keepAliveMs ?? 15_000,
      streamedBodies: options.streamedBodies ?? true,
    },
    streams: new StreamHub(),
    webhooks: new WebhookDispatcher(() => world),
    events: new MockEventBus(),
  };
  const fetch = async (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
    // A Request keeps its method, headers and body when init adds to it (ky always passes an init);
    // only a string or URL is resolved against the base URL.
    const request =
      input instanceof Request
        ? init === undefined
          ? input
          : new Request(input, init)
        : new Request(new URL(String(input), `${baseUrl}/`), init);
    return toResponse(await serveRequest(world, fromRequest(request)));
  };

  let handlers: ReturnType<typeof handlersWith> | undefined;
  return {
    baseUrl,
    fetch,
    get handlers() {
      handlers ??= handlersWith(loadMswHttp(), { baseUrl, fetch });
      return handlers;
    },
    async listen({ port = 0 } = {}): Promise<MockServer> {
      // node:http (and the emulator page, served on this door only) is loaded only when a server is
      // asked for, so the rest runs on any runtime.
      const { serveOnLoopback } = await import('./node-door.js');
      return serveOnLoopback((request) => serveRequest(world, request), port);
    },
    createUser: (input) => createUser(world, input),
    installAgent: (input) => installAgent(world, input),
    postUserMessage: (conversationId, input) => postUserMessage(world, conversationId, input),
    seed: (options) => seedWorld(world, { baseUrl, fetch }, options),
    clickAction: ({ conversation_id, ...click }) => clickAction(world, conversation_id, click),
    clock: {
      now: () => world.clock.now(),
      advance: (seconds) => advanceClock(world, seconds),
    },
    faults: {
      inject: (spec: FaultSpec) => injectFault(world.state, spec),
      clear: () => clearFaults(world.state),
    },
    get deliveries() {
      return world.state.deliveries.map((delivery) => ({ ...delivery }));
    },
    get requests() {
      return snapshotRequests(world.state);
    },
    get openStreams() {
      return world.streams.openCount;
    },
    events: world.events,
    snapshot: () => takeSnapshot(world),
    reset: () => resetWorld(world),
    idle: () => world.webhooks.idle(),
  };
}
