// ReplyWriter, the reply `messages.startReply()` hands back: buffered writes into a streaming
// message, their delivery (patch lines of the open stream, or the append endpoint), recovery from
// history when a step fails (PROTOCOL.md section 8), how the reply ends (complete, interrupted and
// marked, replayed) and the key's lease. Invariant: `handed` is every batch given to a transport in
// order, and `revision` what the message's revision is once all of them are applied; a read-back is
// compared against both before anything is sent again. Below the writer: the service as a reply
// sees it (the client's parts it calls, the marked end of a cut message, the read-back).

import type * as z from 'zod/mini';
import { ConflictError } from '../core/api-error.js';
import { AgentMessagingError, ValidationError } from '../core/errors.js';
import type { RequestOptions } from '../core/options.js';
import { abortedError, sleep } from '../core/retry.js';
import type { Transport } from '../core/transport.js';
import type { ListMessagesQuery } from '../schemas/conversations.js';
import {
  MAX_MESSAGE_TEXT,
  type Message,
  type MessageStatus,
  type SendMessageRequest,
} from '../schemas/messages.js';
import { annotateActive, recordRecovery } from '../telemetry.js';
import type { CheckedReplyOptions, ReplyOutcome, ReplyResult, ReplyTransport } from './options.js';
import { isNotStreaming, ReplyMismatchError, recoveryDelayMs } from './reconcile.js';
import { type HeldReply, leaseLost } from './reply-lease.js';
import type { StreamSink } from './stream-sink.js';
import { WriteBuffer } from './write-buffer.js';

/** Everything a writer is made from, once its message exists. @internal */
export interface ReplyWriterInit {
  api: ReplyApi;
  conversationId: string;
  /** The message as `message.started` described it; `blockIndex` is the block's `part_index`. */
  started: { messageId: string; blockId: string; blockIndex: number };
  /** The checked send shape the message started with. */
  shape: SendMessageRequest;
  checked: CheckedReplyOptions;
  /** The open Streamable HTTP request, or undefined when text goes through the append endpoint. */
  stream: StreamSink | undefined;
  /** The message as the service holds it, when the start replayed one already completed. */
  finished: AppliedState | undefined;
  /** The lease on the reply's key, released when the writer ends. */
  held: HeldReply;
  operation: string;
}

/** Tries a failed step gets before its error is thrown, beyond the first. */
const MAX_RECOVERIES = 3;

// How long lines in flight at a cut get to land before the writer sends what is missing: a period,
// renewed while they keep landing (MAX_SETTLE_PERIODS).
const SETTLE_MS = 500;

// How often the message is read again while lines sent before a cut may still land.
const SETTLE_POLL_MS = 50;

// The longest a settle goes on while lines keep landing, in settle periods: the protocol has no
// fence for lines already in the service's pipeline, so the wait stays bounded (issue 11, outcome 4).
const MAX_SETTLE_PERIODS = 10;

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
  /** The block's text in the send shape. */
  readonly #initialText: string;
  /** Characters the block may still take within the message's limit. */
  readonly #room: number;
  /** The open stream; undefined once text goes through the append endpoint. */
  #stream: StreamSink | undefined;
  #written = '';
  /** Text handed to a transport so far, after the block's initial text. */
  #handed = '';
  /** The revision the message has once every change sent so far is applied. */
  #revision = 0;
  #recovered = false;
  #failure: { error: unknown } | undefined;
  /** The stored result of a finished writer (see the class comment). */
  readonly #finished: ReplyResult | undefined;
  #completion: Promise<ReplyResult> | undefined;
  /** Aborted when the writer is done, which removes its listener on the caller's signal. */
  readonly #done = new AbortController();
  /** The best-effort marking of a cut after the writer failed (see `interrupt()`). */
  #marking: Promise<void> | undefined;

  /** Made by `startReply()`. @internal */
  constructor(init: ReplyWriterInit) {
    this.#init = init;
    const { started, shape, checked } = init;
    this.messageId = started.messageId;
    this.blockId = started.blockId;
    this.replayed = init.finished !== undefined;
    this.#stream = init.stream;
    // The reply writes to the first text block of the send shape (an empty one the service adds when none).
    const texts = shape.content.flatMap((block) => (block.type === 'text' ? [block.text] : []));
    this.#initialText = texts[0] ?? '';
    this.#room = MAX_MESSAGE_TEXT - texts.join('').length;
    this.#buffer = new WriteBuffer((batch) => this.#send(batch), checked.coalesce);
    if (init.finished !== undefined) {
      const { status, revision = 0, text } = init.finished;
      this.#finished = { message_id: this.messageId, status, revision, text, outcome: 'replayed' };
    }
    // Another writer may take the key once this one's lease is lost: stop before text can interleave.
    init.held.onLost(() => this.#fail(leaseLost(this.messageId)));
    const signal = checked.request.signal;
    const onAbort = () => this.#fail(abortedError(signal as AbortSignal));
    signal?.addEventListener('abort', onAbort, { once: true, signal: this.#done.signal });
  }

  /** How text reaches the service now: `stream` until a fallback or a recovery switches to `append`. */
  get transport(): Exclude<ReplyTransport, 'auto'> {
    return this.#stream === undefined ? 'append' : 'stream';
  }

  /** The text written so far, including what is still buffered; a finished writer's is the stored text. */
  get text(): string {
    return this.#finished?.text ?? this.#initialText + this.#written;
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
    if (this.#written.length + text.length > this.#room) {
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
    const room = this.#room - this.#written.length;
    const note = noteAfter(this.text, this.#init.checked.interruptedNote).slice(0, Math.max(0, room));
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
      this.#completion = this.#leaseHeld(true)
        .then(() => this.#buffer.write(note))
        .then(() => this.#finish(undefined, 'interrupted'))
        .catch(async (error: unknown) => {
          this.#marking ??= this.#markCut(note);
          await this.#marking;
          throw error;
        });
    }
    return this.complete();
  }

  /**
   * Sends one batch, once the lease is known to be this writer's still (a stall may have lost it);
   * a failure is recovered.
   */
  async #send(batch: string): Promise<void> {
    await this.#leaseHeld();
    this.#handed += batch;
    this.#revision += 1;
    const expected = this.#revision;
    await this.#recovering(async () => {
      const revision = await this.#append(batch);
      // Another change landed between this writer's last one and this append (a line applied after
      // a cut): the text may be doubled, so the message is read back and checked before going on.
      if (revision !== undefined && revision !== expected) {
        const state = await this.#readBack();
        this.#missing(state);
        this.#revision = state.revision ?? revision;
      }
    });
  }

  /** Sends one change; answers the message's revision after it, when the answer says (the endpoint's). */
  async #append(text: string): Promise<number | undefined> {
    if (this.#stream !== undefined) return this.#stream.append(text);
    const params = { message_id: this.messageId, block_id: this.blockId };
    const body = { path: '/text', value: text };
    const options = appendOptions(this.#init.checked.request);
    return (await this.#init.api.transport.request('messages.append', { params, body, options })).revision;
  }

  /** Completes the message through the stream or the complete endpoint. */
  async #completeOnce(fallbackText: string): Promise<Completion> {
    if (this.#stream !== undefined) return this.#stream.complete(fallbackText);
    const init = {
      params: { message_id: this.messageId },
      body: { status: 'sent', fallbackText },
      options: appendOptions(this.#init.checked.request),
    };
    const { status, revision } = await this.#init.api.transport.request('messages.complete', init);
    return { status, revision };
  }

  /** Throws the writer's failure when its lease turns out lost (`onLost` failed the writer); `renew`: see `current`. */
  async #leaseHeld(renew = false): Promise<void> {
    if (!(await this.#init.held.current(renew))) throw this.#failure?.error ?? leaseLost(this.messageId);
  }

  /**
   * Marks the cut after a failure, straight through the append endpoint and best effort, so the
   * message is not left to the service's silent auto-complete; unless the lease was lost: the
   * writer holding it now owns the message.
   */
  async #markCut(note: string): Promise<void> {
    const error = this.#failure?.error;
    if (ConflictError.is(error) && error.code === 'reply_lease_lost') return;
    const { signal: _, ...request } = this.#init.checked.request;
    // The service unreachable, or the message ended otherwise: nothing more can be done here.
    await endCut(this.#init.api, this, request, note).catch(() => {});
  }

  /** Sends the rest and completes the message, checked; an interrupted one's attempt is then given up. */
  async #finish(fallbackText: string | undefined, outcome: ReplyOutcome = 'complete'): Promise<ReplyResult> {
    try {
      await this.#buffer.flush();
      await this.#leaseHeld();
      const fallback = fallbackText ?? (this.#init.shape.fallbackText || this.text);
      const complete = () => this.#completeOnce(fallback);
      // A completion found already applied is answered as it is.
      const completion = (await this.#recovering(complete, complete)) ?? { status: 'sent', revision: 0 };
      this.#stream?.close();
      annotateActive({ 'reply.transport': this.transport });
      await this.#check(completion);
      if (outcome === 'interrupted') await this.#init.held.giveUp();
      const { status, revision } = completion;
      return { message_id: this.messageId, status, revision, text: this.text, outcome };
    } catch (error) {
      this.#fail(error);
      throw error;
    } finally {
      this.#end();
    }
  }

  /**
   * Checks a completed message against the text written: the completion proves it when no step was
   * recovered and the transport saw the message's whole change log (the stream's echoed patches,
   * giving the block's appended text) or counted it (the append endpoint's revisions, each answered
   * in turn: the completion's revision is then this writer's last). Anything else (a recovery,
   * another writer's change, a completion that is not this writer's) reads the message back: its
   * text and revision must be what was written, else a ReplyMismatchError.
   */
  async #check(completion: Completion): Promise<void> {
    const expected = this.text;
    const proven =
      !this.#recovered &&
      (completion.appended === undefined
        ? completion.revision === this.#revision
        : this.#initialText + completion.appended === expected);
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

  /**
   * Runs one step (an append or the completion). The transport retried what it safely could; a
   * failure left here may have been applied, so the writer stops the stream (lines in flight get a
   * settle period to land, see `#readBack`), switches to the append endpoint, reads the message back,
   * sends exactly the text the service is missing and repeats the step, while the failures are ones a
   * read-back can cure. A completion found already applied is answered as is.
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
      const inDoubt = this.#useAppend();
      if (delayMs > 0) await sleep(delayMs, this.#init.checked.request.signal);
      try {
        const state = await this.#readBack(inDoubt);
        const missing = this.#missing(state);
        if (state.status !== 'streaming') return { status: state.status, revision: state.revision ?? 0 };
        if (missing !== '') {
          this.#revision = (state.revision ?? 0) + 1;
          await this.#append(missing);
        }
        return await repeat?.();
      } catch (failure) {
        error = failure;
      }
    }
    throw error;
  }

  /**
   * The message as the service holds it. After a cut with lines in doubt it is read again until its
   * revision reaches the writer's (every change sent has landed), or until a settle period passed
   * without a change landing: lines in flight when a connection was cut may still be applied, and
   * text sent again before they land would be doubled. A service still draining its backlog (the
   * revision grows) is waited for, up to MAX_SETTLE_PERIODS settle periods in all.
   */
  async #readBack(inDoubt = 0): Promise<AppliedState> {
    const { api, conversationId, started, checked } = this.#init;
    const read = () => readBack(api, conversationId, started, checked.request);
    const settleMs = Math.min(SETTLE_MS, checked.progressTimeoutMs);
    const begun = performance.now();
    const cap = begun + settleMs * MAX_SETTLE_PERIODS;
    let until = inDoubt > 0 ? begun + settleMs : begun;
    let state = await read();
    while ((state.revision ?? 0) < this.#revision && performance.now() < until) {
      await sleep(SETTLE_POLL_MS, checked.request.signal);
      const before = state.revision ?? 0;
      state = await read();
      // A change landed: the service is still applying what was in flight, so it gets another period.
      if ((state.revision ?? 0) > before) until = Math.min(cap, performance.now() + settleMs);
    }
    return state;
  }

  /**
   * The text the service is missing of what was handed (the text expected once every handed batch is
   * applied). Appends apply whole and in order, so the text applied is a prefix of it; text beyond
   * it, or text no prefix explains, is text the reply never wrote (another writer's, or a line
   * applied after the writer read back): a ReplyMismatchError. Text missing from a message already
   * completed can no longer be added, and is an error too.
   */
  #missing(state: AppliedState): string {
    const expected = this.#initialText + this.#handed;
    const { messageId } = this;
    if (!expected.startsWith(state.text)) {
      throw new ReplyMismatchError(
        messageId,
        expected.length,
        state.text.length,
        this.#revision,
        state.revision,
      );
    }
    const missing = expected.slice(state.text.length);
    if (missing !== '' && state.status !== 'streaming') {
      throw new AgentMessagingError(
        `${this.#init.operation}: message ${messageId} was completed before all of the reply's text was applied.`,
      );
    }
    return missing;
  }

  /** Stops the stream (answering how many of its lines are in doubt) and uses append from now on. */
  #useAppend(): number {
    const inDoubt = this.#stream?.stop() ?? 0;
    this.#stream = undefined;
    return inDoubt;
  }

  async #answerFinished(result: ReplyResult): Promise<ReplyResult> {
    this.#end();
    if (this.#failure !== undefined) throw this.#failure.error;
    return result;
  }

  #fail(error: unknown): void {
    this.#failure ??= { error };
    this.#buffer.fail(error);
    this.#stream?.close(error);
    this.#end();
  }

  /** The writer is done: no more abort listening, and the key's lease is released. */
  #end(): void {
    this.#done.abort();
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

/**
 * The parts of a client a reply uses: the transport (the start, append and complete calls) and the
 * history it reads back (the messages resource hands it over).
 * @internal
 */
export interface ReplyApi {
  readonly transport: Transport;
  readonly conversations: {
    history(id: string, query?: ListMessagesQuery, options?: RequestOptions): AsyncIterable<Message>;
  };
}

/** What a completion answers. @internal */
export interface Completion {
  status: z.output<typeof MessageStatus>;
  revision: number;
  /** The text appended to the reply's block, as the sink saw every change applied (the stream's). */
  appended?: string;
}

/**
 * A reply's request options for the append and complete endpoints: never retried blindly (appends
 * are not idempotent, so a failure is read back instead), and without the start's Idempotency-Key.
 * @internal
 */
export function appendOptions({ signal, timeoutMs, headers }: RequestOptions): RequestOptions {
  return { signal, timeoutMs, headers, maxRetries: 0 };
}

/**
 * Ends a message cut short through the append endpoint: `note` appended (nothing when it is empty)
 * and the message completed with `fallbackText`. A message another run completed meanwhile (the
 * service's 10 minute auto-complete, say) is ended already.
 * @internal
 */
export async function endCut(
  api: ReplyApi,
  { messageId, blockId }: { messageId: string; blockId: string },
  request: RequestOptions,
  note: string,
  fallbackText = note.trim(),
): Promise<void> {
  const options = appendOptions(request);
  if (note !== '') {
    const params = { message_id: messageId, block_id: blockId };
    await api.transport.request('messages.append', { params, body: { path: '/text', value: note }, options });
  }
  const body = { status: 'sent', fallbackText };
  await api.transport
    .request('messages.complete', { params: { message_id: messageId }, body, options })
    .catch((error: unknown) => {
      if (!isNotStreaming(error)) throw error;
    });
}

/** What the service holds of a reply: the text of its block, its status and its revision. @internal */
export type AppliedState = Awaited<ReturnType<typeof readBack>>;

// A reply is among the newest messages; a conversation this busy while it streams is not expected.
const READ_BACK_LIMIT = 1_000;

/**
 * Finds the reply in history (newest first) and answers the text of its part `blockIndex`, its
 * status and its revision: exactly what the service applied. A read, so the transport retries it.
 * @internal
 */
export async function readBack(
  api: ReplyApi,
  conversationId: string,
  target: { messageId: string; blockIndex: number },
  request: RequestOptions,
) {
  const { signal, timeoutMs, headers } = request;
  let seen = 0;
  for await (const message of api.conversations.history(conversationId, {}, { signal, timeoutMs, headers })) {
    if (message.id === target.messageId) {
      const part = message.parts?.find((candidate) => candidate.part_index === target.blockIndex);
      return { text: part?.text ?? '', status: message.status, revision: message.revision };
    }
    if (++seen >= READ_BACK_LIMIT) break;
  }
  throw new AgentMessagingError(
    `message ${target.messageId} is not among the conversation's newest ${READ_BACK_LIMIT} messages, so the reply cannot be resumed.`,
  );
}
