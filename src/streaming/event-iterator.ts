// The iterator behind `for await (const event of stream)`. An async generator costs a generator
// resume and an extra await per `yield`; events come in batches (a chunk of the body holds dozens
// of token-sized patches), so this hands out each event of a batch with one settled promise, and
// goes back to the reader only when the batch is used up.
import { ConnectionError } from '../core/errors.js';
import type { StreamEvent } from '../schemas/stream.js';
import type { StreamedMessageBuilder } from './streamed-message.js';

type Step = IteratorResult<StreamEvent, undefined>;

const DONE: Step = Object.freeze({ value: undefined, done: true });

/**
 * Hands out the events of `batches` one by one, applying each to `builder` as it is handed out.
 * Calls made before the previous one settled wait for it, as an async generator's do; `return()`
 * (a `break`) closes the reader, which cancels the body. `onDone` runs once, when the iteration ends
 * in any way; `unread` says the body was never read (so the reader never took it over).
 * @internal
 */
export class EventIterator implements AsyncIterableIterator<StreamEvent, undefined, undefined> {
  readonly #batches: AsyncGenerator<StreamEvent[], void, undefined>;
  readonly #builder: StreamedMessageBuilder;
  readonly #onDone: (unread: boolean) => void;
  #batch: StreamEvent[] = [];
  #index = 0;
  #finished = false;
  #pulled = false;
  /** The error of an event the builder refused, thrown by the next `#advance`. */
  #refused: unknown;
  /** The call in progress that is not a plain hand-out; later calls queue behind it. */
  #busy: Promise<Step> | undefined;

  /** Iterates `batches` into `builder`. */
  constructor(
    batches: AsyncGenerator<StreamEvent[], void, undefined>,
    builder: StreamedMessageBuilder,
    onDone: (unread: boolean) => void,
  ) {
    this.#batches = batches;
    this.#builder = builder;
    this.#onDone = onDone;
  }

  /** The next event, or the end; an error of the stream rejects it (once, then the end). */
  next(): Promise<Step> {
    if (this.#busy === undefined && this.#index < this.#batch.length) {
      const step = this.#take();
      if (step !== undefined) return Promise.resolve(step);
    }
    return this.#queue(() => this.#advance());
  }

  /** Stops reading: cancels the body (unless the stream already ended) and ends the iteration. */
  return(): Promise<Step> {
    return this.#queue(async () => {
      if (!this.#finished) {
        this.#finish();
        await this.#batches.return(undefined);
      }
      return DONE;
    });
  }

  /** The iterator itself, so it can be handed to `for await` as well. */
  [Symbol.asyncIterator](): this {
    return this;
  }

  /**
   * The next event of the batch the builder accepts, or undefined when the batch is used up (an
   * exact repeat is dropped). An event the builder refuses fails the iteration: the batch is
   * dropped and `#advance` closes the body.
   */
  #take(): Step | undefined {
    while (this.#index < this.#batch.length) {
      const event = this.#batch[this.#index++] as StreamEvent;
      try {
        if (this.#builder.apply(event)) return { value: event, done: false };
      } catch (error) {
        this.#batch = [];
        this.#index = 0;
        this.#refused = error;
        return undefined;
      }
    }
    return undefined;
  }

  #queue(step: () => Promise<Step>): Promise<Step> {
    const run = this.#busy === undefined ? step() : this.#busy.then(step, step);
    this.#busy = run;
    // Registered before the caller's own reaction, so its next call finds the queue empty.
    const settle = () => {
      if (this.#busy === run) this.#busy = undefined;
    };
    run.then(settle, settle);
    return run;
  }

  async #advance(): Promise<Step> {
    while (!this.#finished) {
      const step = this.#take();
      if (step !== undefined) return step;
      if (this.#refused !== undefined) {
        const refused = this.#refused;
        this.#refused = undefined;
        this.#finish();
        await this.#batches.return(undefined);
        throw refused;
      }
      let read: IteratorResult<StreamEvent[], void>;
      this.#pulled = true;
      try {
        read = await this.#batches.next();
      } catch (error) {
        this.#finish();
        throw error;
      }
      if (read.done) {
        this.#finish();
        if (!this.#builder.snapshot()?.completed) {
          throw new ConnectionError(
            'The event stream ended before message.completed; the message may still be streaming.',
          );
        }
        return DONE;
      }
      this.#batch = read.value;
      this.#index = 0;
    }
    return DONE;
  }

  #finish(): void {
    this.#finished = true;
    this.#batch = [];
    this.#index = 0;
    this.#onDone(!this.#pulled);
  }
}
