// The mock's clock runs with real time plus every advance(); the scheduler runs tasks keyed on it,
// both when advance() moves the clock and on a real timer, so a 5 s retry also happens in real time.

/** A task due at a time on the mock clock. */
interface Task {
  id: number;
  at: number;
  run: () => void;
}

/** Time as the mock sees it, and the work that waits for a moment of it. */
export class MockClock {
  #offsetMs: number;
  #tasks: Task[] = [];
  #nextId = 1;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(start?: Date) {
    this.#offsetMs = start ? start.getTime() - Date.now() : 0;
  }

  /** The current time on the mock clock. */
  now(): Date {
    return new Date(this.nowMs());
  }

  /** The current time on the mock clock, in milliseconds since the epoch. */
  nowMs(): number {
    return Date.now() + this.#offsetMs;
  }

  /** Moves the clock forward and runs every task that became due, in time order. */
  async advance(seconds: number): Promise<void> {
    if (!Number.isFinite(seconds) || seconds < 0) {
      throw new RangeError('seconds: must be a finite number of seconds, 0 or more');
    }
    this.#offsetMs += seconds * 1000;
    this.runDue();
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

  /** Drops every scheduled task (used by reset). */
  clearTasks(): void {
    this.#tasks = [];
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
