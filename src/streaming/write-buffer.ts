// Coalesces many small writes into few sends, one send at a time, with backpressure on the writer.
// The first write, and the first after a pause, goes at once (as soon as the sender is free): the user
// sees the first token without waiting for the timer (issue 17). A pause is at least `ms` without a
// write, so each pause adds at most one send to what the timer and the threshold send anyway.

/** When buffered text is sent: whichever comes first. */
export interface CoalesceOptions {
  /** Send once this many characters are waiting (default 256). */
  chars?: number;
  /** Send once the oldest waiting character has waited this long, in milliseconds (default 100). */
  ms?: number;
}

// How many batches may wait before write() makes the producer wait.
const HIGH_WATER_BATCHES = 4;

/**
 * Text written but not yet sent. A single sender drains it in order, so batches never overlap;
 * `write()` resolves once the waiting text is below a bound, so a fast producer is slowed to the
 * pace of the wire instead of filling memory. A failed send fails every later write and flush.
 * @internal
 */
export class WriteBuffer {
  readonly #send: (batch: string) => Promise<void>;
  readonly #chars: number;
  readonly #ms: number;
  readonly #highWater: number;
  #pending = '';
  #due = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | undefined;
  #failure: { error: unknown } | undefined;
  #writes: Promise<void> = Promise.resolve();
  #drained: (() => void)[] = [];
  /** When the last write was taken (`performance.now()`); none yet at first. */
  #lastWrite = Number.NEGATIVE_INFINITY;

  constructor(send: (batch: string) => Promise<void>, options: Required<CoalesceOptions>) {
    this.#send = send;
    this.#chars = options.chars;
    this.#ms = options.ms;
    this.#highWater = options.chars * HIGH_WATER_BATCHES;
  }

  /** Queues text; resolves once it is buffered and the buffer is below its bound. */
  write(text: string): Promise<void> {
    // Writes take turns, so text keeps its order even when callers do not await each write.
    const turn = this.#writes.then(async () => {
      while (this.#pending.length >= this.#highWater && this.#failure === undefined) {
        await new Promise<void>((resolve) => this.#drained.push(resolve));
      }
      this.#throwIfFailed();
      if (text === '') return;
      this.#pending += text;
      const now = performance.now();
      if (now - this.#lastWrite >= this.#ms) this.#due = true;
      this.#lastWrite = now;
      this.#armTimer();
      this.#kick();
    });
    this.#writes = turn.catch(() => {});
    return turn;
  }

  /** Sends everything waiting (after earlier writes) and resolves once it has been sent. */
  async flush(): Promise<void> {
    await this.#writes;
    this.#due = true;
    this.#kick();
    while (this.#running !== undefined) await this.#running;
    this.#throwIfFailed();
  }

  /** Stops the buffer: later writes and flushes reject with `error`, waiting writers wake. */
  fail(error: unknown): void {
    this.#failure ??= { error };
    this.#stopTimer();
    for (const wake of this.#drained.splice(0)) wake();
  }

  /** Whether the waiting text is due: enough of it, or a pause or the timer said so. */
  #ready(): boolean {
    return this.#pending.length >= this.#chars || (this.#due && this.#pending.length > 0);
  }

  #kick(): void {
    if (this.#running !== undefined || this.#failure !== undefined) return;
    if (this.#ready()) {
      this.#running = this.#drain().finally(() => {
        this.#running = undefined;
      });
    } else if (this.#pending.length === 0) {
      this.#due = false;
    }
  }

  async #drain(): Promise<void> {
    while (this.#failure === undefined && this.#ready()) {
      const batch = this.#pending;
      this.#pending = '';
      this.#due = false;
      this.#stopTimer();
      for (const wake of this.#drained.splice(0)) wake();
      try {
        await this.#send(batch);
      } catch (error) {
        this.fail(error);
      }
    }
  }

  // The timer runs from the oldest waiting character; a send that takes the text stops it.
  #armTimer(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#due = true;
      this.#kick();
    }, this.#ms);
  }

  #stopTimer(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure.error;
  }
}
