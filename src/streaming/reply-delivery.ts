// A reply's text on its way to the message: through a sink (the open stream, or the append endpoint),
// and recovered from history when a step fails (PROTOCOL.md section 8). Invariant: `handed` is every
// batch given to a sink in order, and `revision` what the message's revision is once all of them
// are applied; a read-back is compared against both before anything is sent again.

import type { RequestOptions } from '../core/options.js';
import { sleep } from '../core/retry.js';
import { recordRecovery } from '../telemetry.js';
import { missingText, recoveryDelayMs } from './reconcile.js';
import { ReplyMismatchError } from './reply-mismatch-error.js';
import {
  AppendSink,
  type AppliedState,
  type Completion,
  endCut,
  type ReplyApi,
  type ReplySink,
  readBack,
  settledReadBack,
} from './reply-sinks.js';

/** What a delivery writes to, and how. @internal */
export interface DeliveryInit {
  api: ReplyApi;
  conversationId: string;
  messageId: string;
  blockId: string;
  blockIndex: number;
  /** The block's text in the send shape. */
  initialText: string;
  sink: ReplySink;
  request: RequestOptions;
  /** How long a stalled or cut connection gets for lines in flight to land. */
  settleMs: number;
  operation: string;
}

/** Tries a failed step gets before its error is thrown, beyond the first. */
const MAX_RECOVERIES = 3;

/** Sends a reply's batches and its completion, recovering from failures by reading back. @internal */
export class ReplyDelivery {
  readonly #init: DeliveryInit;
  readonly messageId: string;
  readonly blockId: string;
  #sink: ReplySink;
  /** Text handed to a sink so far, after the block's initial text. */
  #handed = '';
  /** The revision the message has once every change sent so far is applied. */
  #revision = 0;
  #recovered = false;

  constructor(init: DeliveryInit) {
    this.#init = init;
    this.messageId = init.messageId;
    this.blockId = init.blockId;
    this.#sink = init.sink;
  }

  /** Where text goes now: the stream until a fallback or a recovery switches to the append endpoint. */
  get sink(): ReplySink {
    return this.#sink;
  }

  /** Completes the message (recovering as a batch does); a completion found already applied is answered. */
  async complete(fallbackText: string): Promise<Completion> {
    const complete = () => this.#sink.complete(fallbackText);
    return (await this.#recovering(complete, complete)) ?? { status: 'sent', revision: 0 };
  }

  /**
   * Checks a completed message against `expected`, the text written: the completion proves it when
   * no step was recovered and the sink saw the message's whole change log (the stream's echoed
   * patches, giving the block's appended text) or counted it (the append endpoint's revisions, each
   * answered in turn: the completion's revision is then this writer's last). Anything else (a
   * recovery, another writer's change, a completion that is not this writer's) reads the message
   * back: its text and revision must be what was written, else a ReplyMismatchError.
   */
  async check(expected: string, completion: Completion): Promise<void> {
    const proven =
      !this.#recovered &&
      (completion.appended === undefined
        ? completion.revision === this.#revision
        : this.#init.initialText + completion.appended === expected);
    if (proven) return;
    const state = await this.#readBack();
    const { revision } = completion;
    if (state.text !== expected || (state.revision !== undefined && state.revision !== revision)) {
      throw new ReplyMismatchError(
        this.messageId,
        expected.length,
        state.text.length,
        revision,
        state.revision,
      );
    }
  }

  /** Sends one batch; a failure is recovered. */
  async send(batch: string): Promise<void> {
    this.#handed += batch;
    this.#revision += 1;
    const expected = this.#revision;
    await this.#recovering(async () => {
      const revision = await this.#sink.append(batch);
      // Another change landed between this writer's last one and this append (a line applied after
      // a cut): the text may be doubled, so the message is read back and checked before going on.
      if (revision !== undefined && revision !== expected) {
        const state = await this.#readBack();
        this.#reconcile(state);
        this.#revision = state.revision ?? revision;
      }
    });
  }

  /**
   * Marks a cut after the writer failed, straight through the append endpoint and best effort, so the
   * message is not left to the service's silent auto-complete.
   */
  async markCut(note: string): Promise<void> {
    const { signal: _, ...request } = this.#init.request;
    const target = { messageId: this.messageId, blockId: this.blockId };
    // The service unreachable, or the message ended otherwise: nothing more can be done here.
    await endCut(this.#init.api, target, request, note).catch(() => {});
  }

  /**
   * Runs one step (an append or the completion). The transport retried what it safely could; a
   * failure left here may have been applied, so the writer stops the stream (lines in flight get
   * `settleMs` to land), switches to the append endpoint, reads the message back, sends exactly the
   * text the service is missing and repeats the step, while the failures are ones a read-back can
   * cure. A completion found already applied is answered as is.
   */
  async #recovering<T>(step: () => Promise<T>, repeat?: () => Promise<T>) {
    let error: unknown;
    try {
      return await step();
    } catch (failure) {
      error = failure;
    }
    for (let attempt = 1; attempt <= MAX_RECOVERIES; attempt++) {
      const delayMs = recoveryDelayMs(error, attempt);
      if (delayMs === undefined) throw error;
      this.#recovered = true;
      recordRecovery({ attempt, 'error.type': error instanceof Error ? error.name : 'Error' });
      const inDoubt = await this.#useAppend(error);
      if (delayMs > 0) await sleep(delayMs, this.#init.request.signal);
      try {
        const state = await this.#readBack(inDoubt);
        const missing = this.#reconcile(state);
        if (state.status !== 'streaming') return { status: state.status, revision: state.revision ?? 0 };
        if (missing !== '') {
          this.#revision = (state.revision ?? 0) + 1;
          await this.#sink.append(missing);
        }
        return await repeat?.();
      } catch (failure) {
        error = failure;
      }
    }
    throw error;
  }

  /** The message as the service holds it; after a cut with lines in doubt, once they landed or `settleMs` passed. */
  #readBack(inDoubt = 0): Promise<AppliedState> {
    const { api, conversationId, blockIndex, request, settleMs } = this.#init;
    const read = () => readBack(api, conversationId, { messageId: this.messageId, blockIndex }, request);
    return inDoubt > 0 ? settledReadBack(read, this.#revision, settleMs, request.signal) : read();
  }

  /** The text the service is missing of what was handed; a typed error when it holds other text. */
  #reconcile(state: AppliedState): string {
    const expected = this.#init.initialText + this.#handed;
    return missingText(expected, state, this.messageId, this.#revision, this.#init.operation);
  }

  /** Stops the stream sink (answering how many of its lines are in doubt) and uses append from now on. */
  async #useAppend(reason: unknown): Promise<number> {
    if (this.#sink.kind === 'append') return 0;
    const inDoubt = await this.#sink.stop(this.#init.settleMs);
    this.#sink.close(reason);
    const { api, request } = this.#init;
    this.#sink = new AppendSink(api, { messageId: this.messageId, blockId: this.blockId }, request);
    return inDoubt;
  }
}
