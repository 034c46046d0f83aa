// ReplyWriter, the reply `messages.startReply()` hands back: buffered writes into a streaming
// message, how the reply ends (complete, interrupted and marked, replayed) and the key's lease; the
// text's delivery and its recovery from history are reply-delivery.ts.

import { ConflictError } from '../core/api-error.js';
import { AgentMessagingError, ValidationError } from '../core/errors.js';
import { abortedError } from '../core/retry.js';
import { MAX_MESSAGE_TEXT } from '../schemas/messages.js';
import { annotateActive } from '../telemetry.js';
import type { ReplyOutcome, ReplyResult, ReplyTransport } from './options.js';
import { type DeliveryInit, ReplyDelivery } from './reply-delivery.js';
import { type HeldReply, leaseLost } from './reply-lease.js';
import type { AppliedState } from './reply-sinks.js';
import { WriteBuffer } from './write-buffer.js';

/** Everything a writer is made from, once its message exists: its delivery's, and these. @internal */
export interface ReplyWriterInit extends DeliveryInit {
  /** Characters the block may still take within the message's limit. */
  room: number;
  /** Used when `complete()` is given no fallbackText; else the reply's text is. */
  fallbackText: string | undefined;
  /** The message as the service holds it, when the start replayed one already completed. */
  finished?: AppliedState;
  /** The lease on the reply's key, released when the writer ends. */
  held: HeldReply;
  coalesce: { chars: number; ms: number };
  /** The note a reply cut short ends with. */
  interruptedNote: string;
}

/**
 * A reply being written into a streaming message. Writes are buffered and sent in batches (the
 * first write at once, then 256 characters or 100 ms); `write()` waits when too much is buffered.
 * `complete()` sends the rest and completes the message; `interrupt()` ends it cut short, marked.
 * A connection that breaks or stalls is recovered: the message is read back and exactly the text the
 * service did not apply is sent through the append endpoint. Every completed message is checked
 * against the text written (read back unless the completion itself proves it), so the result is never
 * a success the service does not hold. After a stall, the writer checks it still holds its key's
 * lease before it writes again. A start that
 * replayed a message already completed under the same key gives a finished writer: writes are
 * dropped and `complete()` answers that message with outcome `replayed`.
 *
 * @example
 * const reply = await client.messages.startReply(cnv, { replyToMessageId });
 * for await (const token of llm) await reply.write(token);
 * const { message_id, revision, text, outcome } = await reply.complete();
 */
export class ReplyWriter {
  /** The id of the message being written. */
  readonly messageId: string;
  /** The id of the text block the reply appends to. */
  readonly blockId: string;
  /** True when the start replayed a reply an earlier writer of the key finished: writes are dropped. */
  readonly replayed: boolean;
  readonly #init: ReplyWriterInit;
  readonly #buffer: WriteBuffer;
  readonly #delivery: ReplyDelivery;
  #written = '';
  #failure: { error: unknown } | undefined;
  /** The stored result of a finished writer (see the class comment). */
  readonly #finished: ReplyResult | undefined;
  #completion: Promise<ReplyResult> | undefined;
  #onAbort: (() => void) | undefined;
  /** The best-effort marking of a cut after the writer failed (see `interrupt()`). */
  #marking: Promise<void> | undefined;

  /** Made by `startReply()`. @internal */
  constructor(init: ReplyWriterInit) {
    this.#init = init;
    this.messageId = init.messageId;
    this.blockId = init.blockId;
    this.replayed = init.finished !== undefined;
    this.#delivery = new ReplyDelivery(init);
    this.#buffer = new WriteBuffer((batch) => this.#send(batch), init.coalesce);
    if (init.finished !== undefined) {
      const { status, revision = 0, text } = init.finished;
      this.#finished = { message_id: init.messageId, status, revision, text, outcome: 'replayed' };
    }
    // Another writer may take the key once this one's lease is lost: stop before text can interleave.
    init.held.onLost(() => this.#fail(leaseLostError(this.messageId)));
    const signal = init.request.signal;
    if (signal !== undefined) {
      this.#onAbort = () => this.#fail(abortedError(signal));
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  /** How text reaches the service now: `stream` until a fallback or a recovery switches to `append`. */
  get transport(): Exclude<ReplyTransport, 'auto'> {
    return this.#delivery.sink.kind;
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

  /**
   * Ends the reply cut short (its source failed, or the handler was interrupted): sends what is
   * buffered, appends the interrupted note (` … [interrupted]` unless set otherwise) and completes
   * the message, so the user sees the cut visibly; the key's attempt is given up, so a retry writes
   * its answer as a new message. Answers outcome `interrupted`.
   */
  interrupt(): Promise<ReplyResult> {
    const room = this.#init.room - this.#written.length;
    const note = noteAfter(this.text, this.#init.interruptedNote).slice(0, Math.max(0, room));
    if (this.#failure !== undefined && this.#finished === undefined) {
      // The writer already failed (its completion too): the cut is marked all the same.
      this.#marking ??= this.#markCut(note);
      return this.#marking.then(() => this.complete());
    }
    if (this.#completion === undefined && this.#finished === undefined) {
      this.#written += note;
      // A writer stalled past its lease (its renewal not yet run) leaves the message to the writer
      // that took it, which ends it marked: two marks otherwise. Given up once marked and completed
      // (before the lease is let go, so a retry writes a new message): given up earlier, a note that
      // could not be sent left the message streaming unmarked, and no later run looked at it again.
      this.#completion = this.#init.held
        .stillHeld()
        .then((kept) => {
          if (!kept) {
            const lost = leaseLostError(this.messageId);
            this.#fail(lost);
            throw lost;
          }
        })
        .then(() => this.#buffer.write(note))
        .then(() => this.#finish(undefined, 'interrupted', () => this.#init.held.giveUp().then(() => {})))
        .catch(async (error: unknown) => {
          this.#marking ??= this.#markCut(note);
          await this.#marking;
          throw error;
        });
    }
    return this.complete();
  }

  /** Sends a batch, once the lease is known to be this writer's still (a stall may have lost it). */
  async #send(batch: string): Promise<void> {
    await this.#leaseHeld();
    await this.#delivery.send(batch);
  }

  /** Throws the writer's failure when its lease turns out lost (`onLost` failed the writer). */
  async #leaseHeld(): Promise<void> {
    if (!(await this.#init.held.current())) throw this.#failure?.error ?? leaseLostError(this.messageId);
  }

  /** Marks the cut after a failure, unless the lease was lost: the writer holding it now owns the message. */
  async #markCut(note: string): Promise<void> {
    const error = this.#failure?.error;
    if (ConflictError.is(error) && error.code === 'reply_lease_lost') return;
    await this.#delivery.markCut(note);
  }

  async #finish(
    fallbackText: string | undefined,
    outcome: ReplyOutcome = 'complete',
    completed?: () => Promise<void>,
  ): Promise<ReplyResult> {
    try {
      await this.#buffer.flush();
      await this.#leaseHeld();
      const fallback = fallbackText ?? (this.#init.fallbackText || this.text);
      const completion = await this.#delivery.complete(fallback);
      this.#delivery.sink.close();
      annotateActive({ 'reply.transport': this.transport });
      await this.#delivery.check(this.text, completion);
      await completed?.();
      return {
        message_id: this.messageId,
        status: completion.status,
        revision: completion.revision,
        text: this.text,
        outcome,
      };
    } catch (error) {
      this.#fail(error);
      throw error;
    } finally {
      this.#end();
    }
  }

  async #answerFinished(result: ReplyResult): Promise<ReplyResult> {
    this.#end();
    this.#delivery.sink.close();
    if (this.#failure !== undefined) throw this.#failure.error;
    return result;
  }

  #fail(error: unknown): void {
    this.#failure ??= { error };
    this.#buffer.fail(error);
    this.#delivery.sink.close(error);
    this.#end();
  }

  /** The writer is done: no more abort listening, and the key's lease is released. */
  #end(): void {
    if (this.#onAbort) this.#init.request.signal?.removeEventListener('abort', this.#onAbort);
    this.#init.held.release().catch(() => {});
  }
}

/**
 * The note that ends a cut reply, after `text`: without its leading spaces when the text is empty or
 * already ends with a space, so the cut never shows two spaces (or starts the block with one).
 * @internal
 */
export function noteAfter(text: string, note: string): string {
  return text === '' || /\s$/.test(text) ? note.trimStart() : note;
}

const leaseLostError = (messageId: string) =>
  leaseLost(
    messageId,
    '(not renewed within writerLeaseMs, or taken by another writer); this writer sends nothing more',
  );
