// The mock's clock runs with real time plus every advance(); the scheduler runs tasks keyed on it,
// both when advance() moves the clock and on a real timer, so a 5 s retry also happens in real time.
// The clock is kept within the years 0 to 9999: past that a Date is invalid (or, beyond 9999, written
// with a six-digit year the wire's timestamps do not take), and every answer that holds a time fails.
import { MAX_ADVANCE_SECONDS } from '../schemas/mock-limits.js';

/** The earliest time the clock may read: 0000-01-01T00:00:00.000Z. */
const MIN_CLOCK_MS = Date.parse('0000-01-01T00:00:00.000Z');
/** The latest time the clock may read: 9999-12-31T23:59:59.999Z. */
const MAX_CLOCK_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** A task due at a time on the mock clock. */
interface Task {
  id: number;
  at: number;
  run: () => void;
}

/** Time as the mock sees it, and the work that waits for a moment of it. */
export class MockClock {
  /** Where the clock starts, and where reset() puts it back: the `now` option's offset, or 0. */
  readonly #startOffsetMs: number;
  #offsetMs: number;
  #tasks: Task[] = [];
  #nextId = 1;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** A clock at real time, or at `start` (a RangeError naming `now` when it is outside 0 to 9999). */
  constructor(start?: Date) {
    if (start !== undefined && !(start.getTime() >= MIN_CLOCK_MS && start.getTime() <= MAX_CLOCK_MS)) {
      throw new RangeError('now: must be a valid date between the years 0 and 9999');
    }
    this.#startOffsetMs = start ? start.getTime() - Date.now() : 0;
    this.#offsetMs = this.#startOffsetMs;
  }

  /** The current time on the mock clock. */
  now(): Date {
    return new Date(this.nowMs());
  }

  /** The current time on the mock clock, in milliseconds since the epoch. */
  nowMs(): number {
    return Date.now() + this.#offsetMs;
  }

  /**
   * Moves the clock forward and runs every task that became due, in time order. A RangeError naming
   * `seconds` refuses a move of more than ten years, or one past the year 9999; the time is unchanged.
   */
  async advance(seconds: number): Promise<void> {
    if (!(seconds >= 0 && seconds <= MAX_ADVANCE_SECONDS)) {
      throw new RangeError(`seconds: must be a number from 0 to ${MAX_ADVANCE_SECONDS} (ten years)`);
    }
    if (this.nowMs() + seconds * 1000 > MAX_CLOCK_MS) {
      throw new RangeError('seconds: would move the clock past the year 9999');
    }
    this.#offsetMs += seconds * 1000;
    this.runDue();
  }

  /** Undoes every advance and drops every task (reset): real time again, or on from the `now` option. */
  reset(): void {
    this.#offsetMs = this.#startOffsetMs;
    this.#tasks = [];
    this.#arm();
  }

  /** Runs `run` once the clock reaches `at` (ms since the epoch); answers a handle for cancel(). */
  schedule(at: number, run: () => void): number {
    const id = this.#nextId++;
    this.#tasks.push({ id, at, run });
    this.#tasks.sort((a, b) => a.at - b.at || a.id - b.id);
    this.#arm();
    return id;
  }

  /** Drops a scheduled task; unknown handles are ignored. */
  cancel(id: number | undefined): void {
    if (id === undefined) return;
    this.#tasks = this.#tasks.filter((task) => task.id !== id);
    this.#arm();
  }

  /** Runs every due task; a task may schedule more, which run too when already due. */
  runDue(): void {
    for (;;) {
      const task = this.#tasks[0];
      if (!task || task.at > this.nowMs()) break;
      this.#tasks.shift();
      try {
        task.run();
      } catch (error) {
        // A task is internal bookkeeping: its failure must not stop the other tasks.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    this.#arm();
  }

  #arm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const next = this.#tasks[0];
    if (!next) return;
    // setTimeout overflows above 2^31-1 ms; a far task is simply re-armed when this timer fires.
    const delay = Math.min(Math.max(next.at - this.nowMs(), 0), 2 ** 31 - 1);
    this.#timer = setTimeout(() => this.runDue(), delay);
    // The mock must never keep a test process or CLI alive on its own.
    this.#timer.unref?.();
  }
}
