// The ReplyWriter: buffered writes into a streaming message, through whichever sink works, and
// recovery from history when a connection breaks (PROTOCOL.md section 8).
import { AgentMessagingError, ValidationError } from '../core/errors.js';
import type { RequestOptions } from '../core/options.js';
import { abortedError, sleep } from '../core/retry.js';
import { MAX_MESSAGE_TEXT } from '../schemas/messages.js';
import type { ReplyResult, ReplyTransport } from './options.js';
import { compareApplied, DIVERGED, matchSurplus, recoveryDelayMs } from './reconcile.js';
import {
  AppendSink,
  type AppliedState,
  type Completion,
  type ReplyApi,
  type ReplySink,
  readBack,
} from './reply-sinks.js';
import { WriteBuffer } from './write-buffer.js';

/** Everything a writer is made from, once its message exists. @internal */
export interface ReplyWriterInit {
  api: ReplyApi;
  conversationId: string;
  messageId: string;
  blockId: string;
  blockIndex: number;
  /** The block's text in the send shape. */
  initialText: string;
  /** The block's text when the stream started (longer than `initialText` after a replayed start). */
  appliedText: string;
  /** Characters the block may still take within the message's limit. */
  room: number;
  /** Used when `complete()` is given no fallbackText; else the reply's text is. */
  fallbackText: string | undefined;
  sink: ReplySink;
  /** The message as the service holds it, when the start replayed one that is no longer streaming. */
  finished?: AppliedState;
  request: RequestOptions;
  coalesce: { chars: number; ms: number };
  operation: string;
}

/** Tries a failed step gets before its error is thrown, beyond the first. */
const MAX_RECOVERIES = 3;

/**
 * A reply being written into a streaming message. Writes are buffered and sent in batches (256
 * characters or 100 ms by default); `write()` waits when too much is buffered. `complete()` sends
 * the rest and completes the message. A connection that breaks is recovered: the message is read
 * back and the text the service did not apply is sent again, so the final text is exactly the
 * text written. A start that replayed a message already completed under the same key (a retried
 * webhook delivery) gives a finished writer: writes are dropped and `complete()` answers the message
 * as the service holds it, so nothing is sent twice.
 *
 * @example
 * const reply = await client.messages.startReply(cnv, { replyToMessageId });
 * for await (const token of llm) await reply.write(token);
 * const { message_id, revision, text } = await reply.complete();
 */
export class ReplyWriter {
  /** The id of the message being written. */
  readonly messageId: string;
  /** The id of the text block the reply appends to. */
  readonly blockId: string;
  readonly #init: ReplyWriterInit;
  readonly #buffer: WriteBuffer;
  #sink: ReplySink;
  #written = '';
  /** Text handed to a sink so far, after the block's initial text. */
  #handed = '';
  /** Text the service already holds beyond what was handed (a replayed start's): writes must match it. */
  #surplus = '';
  #failure: { error: unknown } | undefined;
  /** The stored result of a finished writer (see the class comment). */
  readonly #finished: ReplyResult | undefined;
  #completion: Promise<ReplyResult> | undefined;
  #onAbort: (() => void) | undefined;

  /** Made by `startReply()`. @internal */
  constructor(init: ReplyWriterInit) {
    this.#init = init;
    this.messageId = init.messageId;
    this.blockId = init.blockId;
    this.#sink = init.sink;
    this.#buffer = new WriteBuffer((batch) => this.#send(batch), init.coalesce);
    const { finished } = init;
    if (finished === undefined) this.#reconcile(init.appliedText, 'streaming');
    else {
      const { status, revision = 0, text } = finished;
      this.#finished = { message_id: init.messageId, status, revision, text };
    }
    const signal = init.request.signal;
    if (signal !== undefined) {
      this.#onAbort = () => this.#fail(abortedError(signal));
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  /** How text reaches the service now: `stream` until a fallback or a recovery switches to `append`. */
  get transport(): Exclude<ReplyTransport, 'auto'> {
    return this.#sink.kind;
  }

  /** The text written so far, including what is still buffered; a finished writer's is the stored text. */
  get text(): string {
    return this.#finished?.text ?? this.#init.initialText + this.#written;
  }

  /** Adds text to the reply; resolves once it is buffered and the buffer is below its bound. */
  async write(text: string): Promise<void> {
    if (typeof text !== 'string') {
      throw new ValidationError([{ field: 'text', message: 'must be a string' }], 'reply.write');
    }
    if (this.#failure !== undefined) throw this.#failure.error;
    if (this.#completion !== undefined)
      throw new AgentMessagingError('reply.write: the reply was already completed.');
    // An earlier run completed the message: it holds its final text, so this text is dropped.
    if (this.#finished !== undefined) return;
    if (this.#written.length + text.length > this.#init.room) {
      throw new ValidationError(
        [{ field: 'text', message: `would make the message longer than ${MAX_MESSAGE_TEXT} characters` }],
        'reply.write',
      );
    }
    this.#written += text;
    await this.#buffer.write(text);
  }

  /** Sends what is buffered and completes the message; a second call answers the same result. */
  complete(options: { fallbackText?: string } = {}): Promise<ReplyResult> {
    const fallbackText = options?.fallbackText;
    if (
      fallbackText !== undefined &&
      (typeof fallbackText !== 'string' || fallbackText.length > MAX_MESSAGE_TEXT)
    ) {
      const message = `must be a string of at most ${MAX_MESSAGE_TEXT} characters`;
      return Promise.reject(new ValidationError([{ field: 'fallbackText', message }], 'reply.complete'));
    }
    this.#completion ??= this.#finished ? this.#answerFinished(this.#finished) : this.#finish(fallbackText);
    return this.#completion;
  }

  async #finish(fallbackText: string | undefined): Promise<ReplyResult> {
    try {
      await this.#buffer.flush();
      if (this.#surplus !== '') throw this.#diverged();
      const fallback = fallbackText ?? (this.#init.fallbackText || this.text);
      const completion = await this.#completeOnce(fallback);
      this.#sink.close();
      return {
        message_id: this.messageId,
        status: completion.status,
        revision: completion.revision,
        text: this.text,
      };
    } catch (error) {
      this.#fail(error);
      throw error;
    } finally {
      if (this.#onAbort) this.#init.request.signal?.removeEventListener('abort', this.#onAbort);
    }
  }

  async #answerFinished(result: ReplyResult): Promise<ReplyResult> {
    if (this.#onAbort) this.#init.request.signal?.removeEventListener('abort', this.#onAbort);
    this.#sink.close();
    if (this.#failure !== undefined) throw this.#failure.error;
    return result;
  }

  async #completeOnce(fallbackText: string): Promise<Completion> {
    const complete = () => this.#sink.complete(fallbackText);
    return (await this.#recovering(complete, complete)) ?? { status: 'sent', revision: 0 };
  }

  /** Sends one batch, minus any part the service already holds; a failure is recovered. */
  async #send(batch: string): Promise<void> {
    let rest = batch;
    if (this.#surplus !== '') {
      const matched = matchSurplus(this.#surplus, batch);
      if (matched === DIVERGED) throw this.#diverged();
      this.#surplus = matched.surplus;
      rest = matched.rest;
    }
    this.#handed += batch;
    if (rest !== '') await this.#recovering(() => this.#sink.append(rest));
  }

  /**
   * Runs one step (an append or the completion). The transport retried what it safely could; a
   * failure left here may have been applied, so the writer switches to the append endpoint, reads
   * the message back, sends exactly the text the service is missing and repeats the step, while the
   * failures are ones a read-back can cure. A completion found already applied is answered as is.
   */
  async #recovering<T>(
    step: () => Promise<T>,
    repeat?: () => Promise<T>,
  ): Promise<T | Completion | undefined> {
    let error: unknown;
    try {
      return await step();
    } catch (failure) {
      error = failure;
    }
    for (let attempt = 1; attempt <= MAX_RECOVERIES; attempt++) {
      const delayMs = recoveryDelayMs(error, attempt);
      if (delayMs === undefined) throw error;
      this.#useAppend(error);
      if (delayMs > 0) await sleep(delayMs, this.#init.request.signal);
      try {
        const { api, conversationId, request } = this.#init;
        const target = { messageId: this.messageId, blockIndex: this.#init.blockIndex };
        const state = await readBack(api, conversationId, target, request);
        const missing = this.#reconcile(state.text, state.status);
        if (state.status !== 'streaming') return { status: state.status, revision: state.revision ?? 0 };
        if (missing !== '') await this.#sink.append(missing);
        return await repeat?.();
      } catch (failure) {
        error = failure;
      }
    }
    throw error;
  }

  /** Compares what the service holds with what was handed; answers the text it is missing. */
  #reconcile(applied: string, status: string): string {
    const compared = compareApplied(this.#init.initialText + this.#handed, applied);
    if (compared === DIVERGED) throw this.#diverged();
    if (compared.missing !== '' && status !== 'streaming') {
      throw new AgentMessagingError(
        `${this.#init.operation}: message ${this.messageId} was completed before all of the reply's text was applied.`,
      );
    }
    this.#surplus = compared.surplus;
    return compared.missing;
  }

  #diverged(): AgentMessagingError {
    return new AgentMessagingError(
      `${this.#init.operation}: message ${this.messageId} holds text that differs from what this reply wrote (was the same idempotency key or eventId used for another reply?).`,
    );
  }

  #useAppend(reason: unknown): void {
    if (this.#sink.kind === 'append') return;
    this.#sink.close(reason);
    const { api, request } = this.#init;
    this.#sink = new AppendSink(api, { messageId: this.messageId, blockId: this.blockId }, request);
  }

  #fail(error: unknown): void {
    this.#failure ??= { error };
    this.#buffer.fail(error);
    this.#sink.close(error);
  }
}
