// The two doors into one mock, so a rule test runs through both: msw (in-process, the global fetch
// patched) and the loopback server (a real port). Each door's hooks are scoped to the describe that
// calls useDoor, so the msw door patches fetch only while its own tests run.
import type { MockService, MockServiceOptions } from 'agent-messaging/testing';
import type { Call, WebhookReceiver } from './helpers.js';
import { useMockOverMsw } from './msw-setup.js';
import { useMockOverLoopback } from './stream-helpers.js';

/** A way in: msw handlers or the loopback server. */
export type Door = 'msw' | 'loopback';

/** Both doors, for `describe.each(DOORS)('... (%s door)', (door) => ...)`. */
export const DOORS: readonly Door[] = ['msw', 'loopback'];

/** One mock behind one door, reset before every test. */
export interface DoorContext {
  door: Door;
  mock: MockService;
  receiver: WebhookReceiver;
  /** Calls the service through this door. */
  call: Call;
  /** The base URL requests of this door go to (read it inside a test: the port is picked in beforeAll). */
  baseUrl(): string;
}

/** Serves a fresh mock through `door` for the tests of the calling describe. */
export function useDoor(door: Door, options: MockServiceOptions = {}): DoorContext {
  if (door === 'msw') {
    const { mock, receiver, call } = useMockOverMsw(options);
    return { door, mock, receiver, call, baseUrl: () => mock.baseUrl };
  }
  const ctx = useMockOverLoopback(options);
  return { door, mock: ctx.mock, receiver: ctx.receiver, call: ctx.call, baseUrl: () => ctx.baseUrl };
}

/** Waits until `condition` holds; a condition that never holds fails the test by its timeout. */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
