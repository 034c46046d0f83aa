// Starting a reply: one writer per key (the lease), the message opened by the streaming send in
// either form and read up to `message.started`, a message a dead writer left streaming ended marked,
// and a ReplyWriter handed back for the message it writes.
import { ApiError } from '../core/api-error.js';
import {
  AgentMessagingError,
  ConnectionError,
  InvalidResponseError,
  ValidationError,
} from '../core/errors.js';
import { isTransient } from '../core/retry.js';
import { isEventStream, messageStreamOf } from './message-stream.js';
import { NdjsonBody, supportsStreamedBodies } from './ndjson-body.js';
import { checkStart, type ReplyOptions, type StreamBody } from './options.js';
import { holdReply, leaseLost } from './reply-lease.js';
import {
  type AppliedState,
  endCut,
  noteAfter,
  type ReplyApi,
  ReplyWriter,
  type ReplyWriterInit,
  readBack,
} from './reply-writer.js';
import { StreamSink } from './stream-sink.js';

/**
 * Starts a streamed reply and returns its writer. `transport: 'stream'` sends one Streamable HTTP
 * request; `append` uses the append and complete endpoints; `auto` (default) streams when the
 * runtime can send a streamed body and falls back to append when the service refuses it (415, 400,
 * or an answer that is not an event stream). The start carries an `Idempotency-Key` (derived from
 * `eventId` when given), so retrying it never creates a second message; when it replays a message
 * already completed, the writer is finished: writes are dropped and `complete()` answers that message.
 *
 * @example
 * const reply = await client.messages.startReply(cnv, { replyToMessageId }, { eventId: event.eventId });
 * await reply.write('Hello');
 * await reply.complete();
 */
export async function startReply(
  api: ReplyApi,
  conversationId: string,
  body?: StreamBody,
  options?: ReplyOptions,
): Promise<ReplyWriter> {
  const operation = 'messages.startReply';
  const { checked, shape, key } = checkStart(conversationId, body, options, operation);
  const streamedBodies = checked.streamedBodies ?? supportsStreamedBodies();
  if (checked.transport === 'stream' && !streamedBodies) {
    const message =
      "is 'stream', but this runtime cannot send a streamed request body (use 'auto' or 'append')";
    throw new ValidationError([{ field: 'transport', message }], operation);
  }
  // One writer per key at a time: a second one waits here for the first, or gets a ConflictError.
  const held = await holdReply(key, checked);
  const ctx = { api, conversationId, shape, checked, operation };
  const streamed = checked.transport !== 'append' && streamedBodies;
  try {
    let { started, stream } = await openMessage(ctx, streamed, held.messageKey);
    let finished: AppliedState | undefined;
    if (started.replayed) {
      // The key's message exists: finished by an earlier run (a delivery the service retried), or
      // streaming. Streaming with no change yet, it is this start's own (an answer lost after the
      // service committed it) or an empty one: this writer takes it over. Streaming with text, a
      // writer that died left it (this one holds the lease): it is ended, marked, and this reply
      // goes to a new message under the next attempt's key, never mixed into another's text.
      // Ended marked but not given up (its ender died or failed before that), it is a cut message
      // all the same: this reply goes to the next attempt, it does not replay the cut text.
      const state = await readBack(api, conversationId, started, checked.request);
      const note = checked.interruptedNote;
      // The note as written after text that ended with a space has lost its leading space (noteAfter).
      const endsMarked = note !== '' && state.text.endsWith(note.trimStart());
      const streaming = state.status === 'streaming';
      if (streaming ? (state.revision ?? 0) > 0 : endsMarked) {
        // The read may have stalled past the lease: another run may be ending it now, so a run
        // that lost the lease marks nothing (the note would land twice).
        if (!(await held.current(true)))
          throw leaseLost(key, "while it read back a dead writer's message; another writer ends it");
        // A dead writer's message: its text stays, marked as cut (once: a run that died after marking
        // it left the note already), and it is completed. The reply lease makes enders take turns.
        const cutNote = endsMarked ? '' : noteAfter(state.text, note);
        if (streaming) await endCut(api, started, checked.request, cutNote, note.trim());
        ({ started, stream } = await openMessage(ctx, streamed, await held.giveUp()));
      } else if (!streaming) {
        finished = state;
      }
    }
    return new ReplyWriter({ ...ctx, started, stream, finished, held });
  } catch (error) {
    await held.release().catch(() => {});
    throw error;
  }
}

// Unacknowledged text allowed on a Streamable HTTP reply, in batches.
const WINDOW_BATCHES = 4;

/**
 * Starts the message under `key`: the Streamable HTTP start when `streamed` (an NDJSON body whose
 * first line is the send shape, kept open for patch lines; a refusal or a broken start falls back to
 * the JSON start with the same key, which replays a committed message), else the JSON start, whose
 * text goes through the append endpoint. A 415, a 400 or an answer that is not an event stream is a
 * refusal (nothing was created).
 */
async function openMessage(
  ctx: StartContext,
  streamed: boolean,
  key: string,
): Promise<{ started: StartedReply; stream: StreamSink | undefined }> {
  const { transport, coalesce, progressTimeoutMs } = ctx.checked;
  let started: StartedReply | undefined;
  if (streamed) {
    const body = new NdjsonBody();
    body.line(ctx.shape);
    try {
      started = await startOnce(ctx, key, body);
    } catch (error) {
      body.abort(error);
      // A refusal created nothing: `auto` falls back to the JSON start below. A start that broke may
      // have been committed: the JSON start carries the same key, so the service replays that message.
      if (isRefusal(error) ? transport === 'stream' : !isTransient(error)) throw error;
    }
    if (started !== undefined && !started.replayed) {
      return {
        started,
        stream: new StreamSink(started, body, coalesce.chars * WINDOW_BATCHES, progressTimeoutMs),
      };
    }
    // Nothing more goes on this request (a replay does not read its lines, a broken start is over):
    // the text goes through the append endpoint.
    body.abort(new AgentMessagingError('replayed start'));
  }
  // The JSON start, whose retries the transport makes; an answer whose stream broke before
  // `message.started` is not the transport's to retry, so it is repeated here once, with the same
  // `Idempotency-Key`: the service replays the same message.
  started ??= await startOnce(ctx, key).catch((error: unknown) => {
    if (!isTransient(error)) throw error;
    return startOnce(ctx, key);
  });
  // The ids are all the append transport needs from the stream: close it.
  started.cancel();
  return { started, stream: undefined };
}

/** What opening a reply's message needs. */
type StartContext = Pick<ReplyWriterInit, 'api' | 'conversationId' | 'shape' | 'checked' | 'operation'>;

/** The message a reply writes to, as `message.started` described it. @internal */
export type StartedReply = Awaited<ReturnType<typeof startOnce>>;

// A streamed start answered with something other than an event stream: a refusal, as a 415 or a 400
// is. It is an InvalidResponseError to the caller (same kind and name); its class tells it apart here.
class NotAnEventStream extends InvalidResponseError {}
const isRefusal = (error: unknown) =>
  (ApiError.is(error) && (error.status === 415 || error.status === 400)) || error instanceof NotAnEventStream;

/** One start: the JSON send shape, or the NDJSON body of a streamed start. */
async function startOnce(ctx: StartContext, key: string, ndjson?: NdjsonBody) {
  // The connection's own abort, so a writer can drop it while a read of its answer is pending.
  const connection = new AbortController();
  const user = ctx.checked.request.signal;
  const signal = user === undefined ? connection.signal : AbortSignal.any([user, connection.signal]);
  const response = await ctx.api.transport.raw('messages.send', {
    params: { conversation_id: ctx.conversationId },
    query: { stream: true },
    body: ndjson ? ndjson.stream : ctx.shape,
    contentType: ndjson ? 'application/x-ndjson' : 'application/json',
    accept: 'text/event-stream',
    operation: ctx.operation,
    options: { ...ctx.checked.request, idempotencyKey: key, signal },
  });
  const replayed = response.headers.get('idempotent-replayed') === 'true';
  if (ndjson && !isEventStream(response)) {
    await response.body?.cancel().catch(() => {});
    throw new NotAnEventStream(`${ctx.operation}: the streamed start was not answered with an event stream.`);
  }
  const stream = messageStreamOf(response, ctx.operation, {
    idleTimeoutMs: ctx.checked.idleTimeoutMs,
    signal,
  });
  const events = stream[Symbol.asyncIterator]();
  // The start is read up to its first event; anything else than a started text block ends it.
  try {
    const first = await events.next();
    const event = first.done ? undefined : first.value;
    if (event?.type !== 'message.started') {
      throw new ConnectionError(`${ctx.operation}: the event stream did not begin with message.started.`);
    }
    const blockIndex = event.message.content.findIndex((block) => block.type === 'text');
    const block = event.message.content[blockIndex];
    if (block === undefined) {
      throw new InvalidResponseError(`${ctx.operation}: message.started holds no text block to write to.`, {
        status: response.status,
        requestId: response.headers.get('request-id') ?? undefined,
      });
    }
    return {
      messageId: event.message.id,
      /** The first text block: the one the reply appends to. */
      blockId: block.id,
      /** Its position, which is its `part_index` in history. */
      blockIndex,
      /** The rest of the answer's events, still open. */
      events,
      /** True when the service replayed an earlier start with the same key. */
      replayed,
      /** Drops the start's connection (both halves). */
      cancel: () => connection.abort(new AgentMessagingError('the reply no longer reads this stream')),
    };
  } catch (error) {
    await events.return?.();
    throw error;
  }
}
