// Webhook delivery (PROTOCOL.md section 6): signed with Standard Webhooks, 10 s timeout, retried
// on the mock clock after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h with the same webhook-id, then dropped.
import { EVENT_SCHEMA } from '../schemas/common.js';
import type { Delivery } from '../schemas/mock-control.js';
import { signWebhook } from '../webhooks/verify.js';
import { newId } from './ids.js';
import type { AgentRecord, MockWorld } from './state.js';

/** Seconds to wait after each failed attempt before the next one. */
const RETRY_DELAYS_S = [5, 300, 1800, 7200, 18_000, 36_000] as const;
/** How long one attempt may take before it counts as failed. */
const DELIVERY_TIMEOUT_MS = 10_000;

interface PendingEvent {
  id: string;
  type: string;
  agentId: string;
  body: string;
  /** The trace context of what caused the event (a user's post), sent as the `traceparent` header. */
  traceparent: string | undefined;
}

/** Sends events to agents' webhooks and keeps track of the attempts still in flight. */
export class WebhookDispatcher {
  readonly #world: () => MockWorld;
  readonly #inflight = new Set<Promise<unknown>>();

  constructor(world: () => MockWorld) {
    this.#world = world;
  }

  /**
   * Builds an event and delivers it in the background, retrying on the schedule; `traceparent`, when
   * given, goes with every attempt (the trace of what caused the event continues at the receiver).
   */
  send(agentId: string, type: string, fields: Record<string, unknown>, traceparent?: string): void {
    const event = this.#event(agentId, type, fields, traceparent);
    this.#attemptInBackground(event, 1);
  }

  /** Sends a `webhook.test` to `url` and waits for the attempt (PATCH webhook); never retried. */
  async verify(agent: AgentRecord, url: string): Promise<Delivery> {
    const event = this.#event(agent.id, 'webhook.test', {});
    return this.#track(this.#attempt(event, url, agent.webhook_secret, 1));
  }

  /** Resolves when every attempt in flight has settled, including ones they start. */
  async idle(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
  }

  #event(agentId: string, type: string, fields: Record<string, unknown>, traceparent?: string): PendingEvent {
    const world = this.#world();
    const id = newId('evt');
    const payload = {
      schema: EVENT_SCHEMA,
      eventId: id,
      type,
      createdAt: world.clock.now().toISOString(),
      agentId,
      ...fields,
    };
    return { id, type, agentId, body: JSON.stringify(payload), traceparent };
  }

  #attemptInBackground(event: PendingEvent, attempt: number): void {
    const world = this.#world();
    const agent = world.state.agents.get(event.agentId);
    // An agent without a verified webhook has nowhere to receive events.
    if (agent?.status !== 'active') return;
    const generation = world.state.generation;
    void this.#track(
      this.#attempt(event, agent.webhook_url, agent.webhook_secret, attempt).then(({ error }) => {
        if (error === null || attempt > RETRY_DELAYS_S.length || world.state.generation !== generation)
          return;
        const delay = RETRY_DELAYS_S[attempt - 1] ?? 0;
        world.clock.schedule(world.clock.nowMs() + delay * 1000, () =>
          this.#attemptInBackground(event, attempt + 1),
        );
      }),
    );
  }

  #track<T>(promise: Promise<T>): Promise<T> {
    this.#inflight.add(promise);
    void promise.finally(() => this.#inflight.delete(promise)).catch(() => undefined);
    return promise;
  }

  /** One attempt, recorded in the deliveries unless a reset came meanwhile; `error` is null for a 2xx. */
  async #attempt(event: PendingEvent, url: string, secret: string, attempt: number): Promise<Delivery> {
    const world = this.#world();
    const generation = world.state.generation;
    const delivery: Delivery = {
      event_id: event.id,
      type: event.type,
      url,
      attempt,
      status: null,
      at: world.clock.now().toISOString(),
      error: null,
    };
    // webhook-timestamp is real wall-clock time even after clock.advance, so real receivers accept it.
    const signed = await signWebhook({ id: event.id, payload: event.body, secret });
    // One deadline: it aborts the request, and holds even for a `fetch` option that ignores the signal.
    const deadline = AbortSignal.timeout(DELIVERY_TIMEOUT_MS);
    try {
      const request = new Request(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...signed,
          ...(event.traceparent ? { traceparent: event.traceparent } : {}),
        },
        body: event.body,
        signal: deadline,
      });
      const response = await Promise.race([world.options.fetch(request), rejectOnAbort(deadline)]);
      await response.body?.cancel().catch(() => undefined);
      delivery.status = response.status;
      if (response.status < 200 || response.status >= 300)
        delivery.error = `answered HTTP ${response.status}`;
    } catch (error) {
      delivery.error = describeFailure(error);
    }
    // The world object outlives a reset; its state does not.
    if (world.state.generation === generation) {
      world.state.deliveries.push(delivery);
      world.events.emit(() => ({ type: 'delivery', delivery: { ...delivery } }));
    }
    return delivery;
  }
}

/** Rejects with the signal's reason once it aborts. */
function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
  );
}

function describeFailure(error: unknown): string {
  if (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `network error: ${message}`;
}
