// The idle timeout of a stream read: time without an event. Keep-alive comments and bytes that make
// no event do not count as progress, so a live but silent service cannot hold a reader forever.
// A timer per read would cost a timer and a promise per chunk,
// and a live stream is a chunk per event; so one timer runs, and when it fires it checks how long
// the current read has really waited, firing `onIdle` or sleeping for exactly what is left.

/**
 * Calls `onIdle` once reads have waited `timeoutMs` with no event received. Time the consumer
 * spends between reads does not count: only the first `waiting()` to `received()` does.
 */
export class IdleWatchdog {
  readonly #timeoutMs: number;
  readonly #onIdle: () => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the pending read started (`performance.now()`), or -1 while no read is pending. */
  #waitingSince = -1;
  #stopped = false;

  /** `onIdle` runs at most once, then the watchdog stops. */
  constructor(timeoutMs: number, onIdle: () => void) {
    this.#timeoutMs = timeoutMs;
    this.#onIdle = onIdle;
  }

  /** A read starts: silence counts from now, unless it already counts (bytes without an event). */
  waiting(): void {
    if (this.#stopped) return;
    if (this.#waitingSince < 0) this.#waitingSince = performance.now();
    if (this.#timer === undefined) this.#arm(this.#timeoutMs);
  }

  /** The read answered with an event (or the end, or an error): silence no longer counts. */
  received(): void {
    this.#waitingSince = -1;
  }

  /** No more reads: clears the timer. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(this.#fire, ms);
    // The stream's own connection keeps a process alive while it waits; this timer should not.
    this.#timer.unref?.();
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    // Between reads the consumer is busy; the next `waiting()` arms the timer again.
    if (this.#stopped || this.#waitingSince < 0) return;
    const left = this.#waitingSince + this.#timeoutMs - performance.now();
    // Node's timers are whole milliseconds and may fire a fraction early: under 1 ms left is due.
    if (left >= 1) {
      this.#arm(left);
      return;
    }
    this.stop();
    this.#onIdle();
  };
}
