// The mock's live feed: every change of state, as it happens, to whoever listens (the emulator
// page through GET /_mock/events, a test in-process). It lives on the world, not in the state,
// so listeners stay subscribed across reset().
import type { MockEvent } from '../schemas/mock-events.js';

/**
 * A listener of the live feed. `seq` numbers the events of the mock's life (1, 2, 3, ...);
 * `GET /_mock/state` answers the last one as `event_seq`, so a reader that subscribed before taking
 * a snapshot can drop the events the snapshot already holds.
 */
export type MockEventListener = (event: MockEvent, seq: number) => void;

/** The live feed: subscribe to every change of the mock's state. */
export interface MockEvents {
  /** Calls `listener` with every event from now on; answers a function that unsubscribes. */
  subscribe(listener: MockEventListener): () => void;
  /** How many listeners are subscribed now, open `GET /_mock/events` connections included. */
  readonly listenerCount: number;
}

/** Fans events out to listeners; events are built only when someone listens. */
export class MockEventBus implements MockEvents {
  readonly #listeners = new Set<MockEventListener>();
  #seq = 0;

  /** The number of the last event emitted (counted even when nobody listened). */
  get seq(): number {
    return this.#seq;
  }

  get listenerCount(): number {
    return this.#listeners.size;
  }

  subscribe(listener: MockEventListener): () => void {
    // A wrapper per subscription, so the same function subscribed twice is two subscriptions.
    const entry: MockEventListener = (event, seq) => listener(event, seq);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /** Sends the event built by `build` to every listener; `build` runs only when someone listens. */
  emit(build: () => MockEvent): void {
    this.#seq += 1;
    if (this.#listeners.size === 0) return;
    const seq = this.#seq;
    const event = build();
    for (const listener of [...this.#listeners]) {
      try {
        listener(event, seq);
      } catch (error) {
        // A listener's bug must not fail the request that caused the event: report it on its own.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
