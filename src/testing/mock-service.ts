// createMockService: one world (state, clock, streams, webhooks) behind one entry (service.ts), with
// the in-process control surface and the doors onto that entry: mock.fetch (and the msw handlers
// over it) and the loopback HTTP server. The public types of `agent-messaging/testing` follow it.
import type {
  ClickActionRequest,
  ClickActionResponse,
  CreateUserRequest,
  CreateUserResponse,
  Delivery,
  FaultSpec,
  InstallRequest,
  InstallResponse,
  RequestLogEntry,
  UserMessageRequest,
  UserMessageResponse,
} from '../schemas/mock-control.js';
import type { MockStateSnapshot } from '../schemas/mock-events.js';
import { MockClock } from './clock.js';
import { advanceClock, resetWorld } from './control.js';
import { injectFault } from './faults.js';
import { MockEventBus, type MockEvents, takeSnapshot } from './live-feed.js';
import { handlersWith, loadMswHttp } from './msw-door.js';
import { snapshotRequests } from './request-log.js';
import { type Seed, type SeedOptions, seedWorld } from './seed.js';
import { serveRequest } from './service.js';
import { createState, type MockWorld } from './state.js';
import { StreamHub } from './streaming.js';
import { clickAction, createUser, installAgent, postUserMessage } from './users.js';
import { WebhookDispatcher } from './webhook-delivery.js';

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
      // The global is read on each call, so msw can patch it after the mock is made.
      fetch: options.fetch ?? ((request) => globalThis.fetch(request)),
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
    const { method, headers, body, signal } = request;
    const answer = await serveRequest(world, { method, url: new URL(request.url), headers, body, signal });
    // A JSON answer's text becomes the body of the Response handed out.
    if (answer instanceof Response) return answer;
    return new Response(answer.text, { status: answer.status, headers: answer.headers });
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
      clear: () => {
        world.state.faults.length = 0;
      },
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

/** Options of {@link createMockService}. */
export interface MockServiceOptions {
  /** Origin the msw handlers answer for. @default 'http://ams.test' */
  baseUrl?: string;
  /** Sends webhooks; resolved on every delivery. @default globalThis.fetch */
  fetch?: (request: Request) => Promise<Response>;
  /** Idle time before an open event stream gets a `: keep-alive` comment. @default 15000 */
  keepAliveMs?: number;
  /** false answers 415 `streaming_unsupported` to every NDJSON request body. @default true */
  streamedBodies?: boolean;
  /** Where the mock clock starts, between the years 0 and 9999 (else a RangeError). @default the real time */
  now?: Date | string | number;
}

/** A real HTTP server onto the mock, on 127.0.0.1. */
export interface MockServer {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  baseUrl: string;
  /** Stops listening and ends every open connection and stream. */
  close(): Promise<void>;
}

/** The mock's clock: real time plus every advance. */
export interface MockClockControl {
  /** The current time on the mock clock. */
  now(): Date;
  /**
   * Moves the clock; due expiries, webhook retries and stream auto-completions run. Rejects with a
   * RangeError for more than ten years at once (315,576,000 s) or a move past the year 9999.
   */
  advance(seconds: number): Promise<void>;
}

/** Fault injection into the next matching requests. */
export interface MockFaults {
  /** Adds a fault (PROTOCOL.md section 13); answers its id. */
  inject(spec: FaultSpec): { fault_id: string };
  /** Removes every fault. */
  clear(): void;
}

/** The whole Agent Messaging Service, in memory. */
export interface MockService {
  /** The origin of the msw handlers. */
  readonly baseUrl: string;
  /**
   * msw request handlers for every path under `baseUrl`, answered by this mock (loaded on first read;
   * msw is an optional peer). Typed loosely so that a project without msw still type-checks; for msw's
   * own types, or a runtime without synchronous `require` of ES modules, use `mswHandlers(mock)` from
   * `agent-messaging/testing/msw`: the same handlers.
   *
   * @example
   * const server = setupServer(...mock.handlers);
   * server.listen({ onUnhandledFrame: 'error' });
   */
  // biome-ignore lint/suspicious/noExplicitAny: msw's handler type cannot be named without msw installed
  readonly handlers: readonly any[];
  /** Answers any request of the service, `/_mock` and the file URLs included; usable as a fetch. */
  fetch(input: Request | string | URL, init?: RequestInit): Promise<Response>;
  /** Serves the mock on 127.0.0.1 (`port` 0 picks a free one). */
  listen(options?: { port?: number }): Promise<MockServer>;
  /** Creates a user; `verified` defaults to true. */
  createUser(input: CreateUserRequest): CreateUserResponse;
  /** The user installs the agent; answers the `agent`-kind conversation. */
  installAgent(input: InstallRequest): InstallResponse;
  /** A user posts in a conversation; active agents get `message.received`. */
  postUserMessage(conversationId: string, input: UserMessageRequest): UserMessageResponse;
  /**
   * The usual start of a test: an active agent (registered through `POST /v1/agents`, webhook
   * verified), a user who installed it, and their conversation, with every credential.
   *
   * @example
   * const mock = createMockService({ fetch: (request) => bot.fetch(request) }); // webhooks reach the bot
   * const { apiKey, webhookSecret, user, conversationId } = await mock.seed({ handle: 'echo' });
   * const bot = createBot({ apiKey, webhookSecret, baseUrl: mock.baseUrl, fetch: mock.fetch });
   * mock.postUserMessage(conversationId, { user_id: user.id, text: 'hi' });
   */
  seed(options?: SeedOptions): Promise<Seed>;
  /**
   * The user clicks a quick reply (PROTOCOL.md section 14): posts the action's label as a user message
   * and delivers it with `postback: { actionId, value, messageId }`. Throws a 404 MockError for an
   * unknown message or action, a 400 for an action that is not a postback.
   *
   * @example
   * mock.clickAction({ conversation_id, user_id: user.id, message_id: reply.message_id, action_id: 'yes' });
   */
  clickAction(input: ClickActionRequest & { conversation_id: string }): ClickActionResponse;
  /** The controllable clock. */
  readonly clock: MockClockControl;
  /** Fault injection. */
  readonly faults: MockFaults;
  /** Every webhook delivery attempt so far, oldest first (a copy). */
  readonly deliveries: Delivery[];
  /** Every `/v1` request so far, as it arrived, oldest first (a copy). */
  readonly requests: RequestLogEntry[];
  /**
   * How many streaming-send responses the mock holds open now. A client that stops reading and
   * cancels the body (a `break` out of the stream) brings it down; the message stays `streaming`.
   */
  readonly openStreams: number;
  /**
   * The live feed: every change of state as it happens (also `GET /_mock/events`).
   *
   * @example
   * const stop = mock.events.subscribe((event) => {
   *   if (event.type === 'message.updated') console.log(event.message.parts);
   * });
   */
  readonly events: MockEvents;
  /** Everything the mock holds now, as `GET /_mock/state` answers it (secrets of agents left out). */
  snapshot(): MockStateSnapshot;
  /** Empties all state and undoes every clock advance (the clock reads real time, or runs from `now`). */
  reset(): void;
  /**
   * Resolves when every webhook delivery attempt in flight has been answered (or timed out),
   * attempts started meanwhile included. It does not wait for work a bot keeps doing after it
   * answered (a 202 with `ack: 'immediately'`, a 409 past `ackTimeoutMs`, running or queued behind
   * its conversation), nor for retries scheduled on the mock clock: `await bot.idle()` for the
   * first, advance the clock for the second.
   */
  idle(): Promise<void>;
}
