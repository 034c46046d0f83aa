// The Streamable HTTP sink: patch lines on the open NDJSON request, acknowledged by the answer's
// echoed `message.patch` events, under a progress deadline that only acknowledgements reset.
import { ConnectionError, InvalidResponseError, TimeoutError } from '../core/errors.js';
import type { NdjsonBody } from './ndjson-body.js';
import type { StartedReply } from './reply-start.js';
import type { Completion } from './reply-writer.js';

/** How long sent text or a sent completion may go unacknowledged by default (issue 11, outcome 5). */
export const DEFAULT_PROGRESS_TIMEOUT_MS = 5_000;

/** The started message a stream sink writes to: its block, the rest of its answer, and its connection's end. */
type StreamTarget = Pick<StartedReply, 'blockId' | 'events' | 'cancel'>;

/**
 * Patch lines on the open NDJSON request. The answer is read all along: each echoed patch
 * acknowledges text, and `append` waits while more than `window` characters are unacknowledged,
 * so a stalled service slows the writer down instead of filling the pipe. Sent text, or a sent
 * completion, that stays unacknowledged for `progressMs` breaks the sink with a TimeoutError
 * (keep-alive comments and junk bytes are not acknowledgements), and the writer falls back to append.
 * @internal
 */
export class StreamSink {
  readonly #target: StreamTarget;
  readonly #body: NdjsonBody;
  readonly #window: number;
  readonly #progressMs: number;
  #sent = 0;
  /** The text the echoed patches appended to the block, whoever sent them: its length is acknowledged. */
  #appended = '';
  #linesSent = 0;
  #patches = 0;
  #completing = false;
  #completed = false;
  #ended = false;
  #broken: unknown;
  #wake: (() => void)[] = [];
  #deadline: ReturnType<typeof setTimeout> | undefined;

  constructor(
    target: StreamTarget,
    body: NdjsonBody,
    window: number,
    progressMs = DEFAULT_PROGRESS_TIMEOUT_MS,
  ) {
    this.#target = target;
    this.#body = body;
    this.#window = window;
    this.#progressMs = progressMs;
    void this.#read();
  }

  async #read(): Promise<void> {
    try {
      for (;;) {
        const next = await this.#target.events.next();
        if (next.done) break;
        const event = next.value;
        if (event.type === 'message.patch') {
          // Every applied append raises the revision, whichever block or input it came from.
          this.#patches += 1;
          if (event.patch.blockId === this.#target.blockId) {
            this.#appended += event.patch.value;
          }
        } else if (event.type === 'message.completed') {
          this.#completed = true;
        }
        this.#progress();
      }
      this.#ended = true;
    } catch (error) {
      this.#broken ??= error;
    } finally {
      this.#stopDeadline();
      this.#body.abort(this.#broken);
      this.#notify();
    }
  }

  /** Whether something sent still waits for its acknowledgement. */
  #outstanding(): boolean {
    return this.#sent > this.#appended.length || (this.#completing && !this.#completed);
  }

  // The deadline runs from the last acknowledgement while anything is outstanding.
  #progress(): void {
    this.#stopDeadline();
    if (this.#outstanding() && this.#broken === undefined) {
      this.#deadline = setTimeout(() => {
        this.#broken ??= new TimeoutError(
          `The service acknowledged nothing of the streamed reply for ${this.#progressMs} ms (progressTimeoutMs).`,
        );
        this.#notify();
      }, this.#progressMs);
      this.#deadline.unref?.();
    }
    this.#notify();
  }

  #stopDeadline(): void {
    clearTimeout(this.#deadline);
    this.#deadline = undefined;
  }

  #notify(): void {
    for (const wake of this.#wake.splice(0)) wake();
  }

  async #until(condition: () => boolean): Promise<void> {
    while (!condition() && this.#broken === undefined && !this.#completed && !this.#ended) {
      await new Promise<void>((resolve) => this.#wake.push(resolve));
    }
    if (this.#broken !== undefined) throw this.#broken;
  }

  async append(text: string): Promise<undefined> {
    if (this.#broken !== undefined) throw this.#broken;
    const line = {
      type: 'message.patch',
      patch: { op: 'appendText', blockId: this.#target.blockId, path: '/text', value: text },
    };
    if (!this.#body.line(line)) throw closed();
    this.#linesSent += 1;
    const idle = !this.#outstanding();
    this.#sent += text.length;
    if (idle) this.#progress();
    await this.#until(() => this.#sent - this.#appended.length < this.#window);
    return undefined;
  }

  async complete(fallbackText: string): Promise<Completion> {
    if (this.#broken !== undefined) throw this.#broken;
    if (!this.#body.line({ type: 'message.completed', fallbackText })) throw closed();
    this.#completing = true;
    this.#body.end();
    this.#progress();
    await this.#until(() => false);
    if (!this.#completed)
      throw this.#broken ?? new ConnectionError('The event stream ended before message.completed.');
    // A completion is only the reply's when every line before it was applied (and echoed).
    if (this.#appended.length < this.#sent) {
      throw new InvalidResponseError(
        `The service completed the streamed reply having acknowledged ${this.#appended.length} of its ${this.#sent} characters.`,
      );
    }
    return { status: 'sent', revision: this.#patches, appended: this.#appended };
  }

  /**
   * Closes the stream after a failure: answers how many lines sent are in doubt (sent, not echoed),
   * none when the answer ended cleanly. Lines in doubt may still land; the writer's read-back waits
   * for them (its `#readBack`).
   */
  stop(): number {
    const clean = this.#ended && this.#broken === undefined;
    this.close();
    return clean ? 0 : Math.max(0, this.#linesSent - this.#patches);
  }

  close(reason?: unknown): void {
    this.#stopDeadline();
    this.#body.abort(reason);
    this.#target.cancel();
    this.#target.events.return?.().catch(() => {});
  }
}

const closed = () => new ConnectionError('The streamed request closed before the reply was complete.');
