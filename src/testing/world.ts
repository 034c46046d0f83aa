// The context every rule receives: the state, the clock, the options, and the live parts
// (open event streams, webhook deliveries) that are not plain data.
import type { MockClock } from './clock.js';
import type { MockEventBus } from './event-bus.js';
import type { MockState } from './state.js';
import type { StreamHub } from './stream-hub.js';
import type { WebhookDispatcher } from './webhook-delivery.js';

/** How the mock sends a webhook: a Web-standard fetch. */
export type FetchLike = (request: Request) => Promise<Response>;

/** The options after defaults, as the rules read them. */
export interface ResolvedOptions {
  /** The fetch for webhooks, resolved on each call so msw can patch the global one later. */
  fetch: () => FetchLike;
  keepAliveMs: number;
  streamedBodies: boolean;
}

/** Everything a rule can touch. `state` is replaced by reset(), so read it through the world. */
export interface MockWorld {
  state: MockState;
  clock: MockClock;
  options: ResolvedOptions;
  streams: StreamHub;
  webhooks: WebhookDispatcher;
  /** The live feed; it outlives reset(), so its listeners do too. */
  events: MockEventBus;
}

/** The clock time as the wire writes it. */
export function iso(date: Date): string {
  return date.toISOString();
}
