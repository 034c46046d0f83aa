// Starting a reply: choose the transport, send the streaming start in either form up to
// `message.started`, and hand back a ReplyWriter for the message it created (or replayed).
import { ApiError, ConflictError } from '../core/api-error.js';
import {
  AgentMessagingError,
  ConnectionError,
  InvalidResponseError,
  ValidationError,
} from '../core/errors.js';
import type { RequestOptions } from '../core/options.js';
import { isTransient } from '../core/retry.js';
import { pathId } from '../core/validate.js';
import { Conversations } from '../resources/conversations.js';
import type { Messages } from '../resources/messages.js';
import { ConversationId } from '../schemas/common.js';
import { MAX_MESSAGE_TEXT, type SendMessageRequest } from '../schemas/messages.js';
import type { StreamEvent } from '../schemas/stream.js';
import { isEventStream, messageStreamOf } from './message-stream.js';
import { NdjsonBody, supportsStreamedBodies } from './ndjson-body.js';
import { checkReplyOptions, type ReplyOptions } from './options.js';
import { holdReply } from './reply-lease.js';
import { AppendSink, type AppliedState, type ReplyApi, type ReplySink, readBack } from './reply-sinks.js';
import { ReplyWriter } from './reply-writer.js';
import { initialBlockText, type StreamBody, startKey, streamingSendShape } from './send-shape.js';
import { StreamSink } from './stream-sink.js';

// Unacknowledged text allowed on a Streamable HTTP reply, in batches.
const WINDOW_BATCHES = 4;

/** The client parts a reply uses, from the client's messages resource. @internal */
export function replyApiOf(messages: Messages): ReplyApi {
  return { transport: messages._transport, messages, conversations: new Conversations(messages._transport) };
}

/**
 * Starts a streamed reply and returns its writer. `transport: 'stream'` sends one Streamable HTTP
 * request; `append` uses the append and complete endpoints; `auto` (default) streams when the
 * runtime can send a streamed body and falls back to append when the service refuses it (415, 400,
 * or an answer that is not an event stream). The start carries an `Idempotency-Key` (derived from
 * `eventId` when given), so retrying it never creates a second message; when it replays a message
 * already completed, the writer is finished: writes are dropped and `complete()` answers that message.
 *
 * @example
 * const reply = await startReply(client.messages, cnv, { replyToMessageId }, { eventId: event.eventId });
 * await reply.write('Hello');
 * await reply.complete();
 */
export async function startReply(
  messages: Messages,
  conversationId: string,
  body?: StreamBody,
  options?: ReplyOptions,
): Promise<ReplyWriter> {
  const operation = 'messages.startReply';
  // Checked here, before anything is sent; the transport encodes it into the path.
  pathId(ConversationId, conversationId, 'conversationId', operation);
  const cnv = conversationId;
  const checked = checkReplyOptions(options, operation);
  const shape = streamingSendShape(body, operation);
  const streamedBodies = checked.streamedBodies ?? supportsStreamedBodies();
  if (checked.transport === 'stream' && !streamedBodies) {
    const message =
      "is 'stream', but this runtime cannot send a streamed request body (use 'auto' or 'append')";
    throw new ValidationError([{ field: 'transport', message }], operation);
  }
  const api = replyApiOf(messages);
  const { signal } = checked.request;
  const key = startKey(checked.request.idempotencyKey, checked.eventId);
  // One writer per key at a time: a second one waits here for the first, or gets a ConflictError.
  const held = await holdReply(key, {
    ledger: checked.ledger,
    ttlMs: LEASE_TTL_MS,
    waitMs: checked.writerWaitMs,
    signal,
  });
  try {
    const ctx = (idempotencyKey: string): StartContext => ({
      api,
      conversationId: cnv,
      shape,
      request: { ...checked.request, idempotencyKey },
      idleTimeoutMs: checked.idleTimeoutMs,
      operation,
    });
    const open = (idempotencyKey: string) =>
      openMessage(
        ctx(idempotencyKey),
        checked.transport,
        streamedBodies,
        checked.coalesce.chars,
        checked.progressTimeoutMs,
      );
    let { started, sink } = await open(held.messageKey);
    let finished: AppliedState | undefined;
    if (started.replayed) {
      // The key's message exists: finished by an earlier run (a delivery the service retried), or
      // streaming. Streaming with no change yet, it is this start's own (an answer lost after the
      // service committed it) or an empty one: this writer takes it over. Streaming with text, a
      // writer that died left it (this one holds the lease): it is ended, marked, and this reply
      // goes to a new message under the next attempt's key, never mixed into another's text.
      const state = await readBack(api, cnv, started, checked.request);
      if (state.status === 'streaming' && (state.revision ?? 0) > 0) {
        sink.close();
        await endDeadReply(api, started, checked.interruptedNote, checked.request);
        ({ started, sink } = await open(await held.giveUp()));
      } else if (state.status !== 'streaming') {
        finished = state;
      }
    }
    const shapeText = shape.content.reduce(
      (sum, block) => sum + (block.type === 'text' ? block.text.length : 0),
      0,
    );
    return new ReplyWriter({
      api,
      conversationId: cnv,
      messageId: started.messageId,
      blockId: started.blockId,
      blockIndex: started.blockIndex,
      initialText: initialBlockText(shape),
      room: MAX_MESSAGE_TEXT - shapeText,
      fallbackText: shape.fallbackText,
      sink,
      ...(finished ? { finished } : {}),
      held,
      request: checked.request,
      coalesce: checked.coalesce,
      interruptedNote: checked.interruptedNote,
      settleMs: Math.min(SETTLE_MS, checked.progressTimeoutMs),
      operation,
    });
  } catch (error) {
    await held.release().catch(() => {});
    throw error;
  }
}

// A lease outlives a stalled step (a progress deadline plus a read-back) and is renewed while held.
const LEASE_TTL_MS = 30_000;
// How long lines in flight at a cut get to land before the writer sends what is missing.
const SETTLE_MS = 500;

/**
 * Starts the message in the chosen transport: the Streamable HTTP start when it can (a refusal or a
 * broken start falls back to the JSON start with the same key, which replays a committed message),
 * else the JSON start, whose sink is the append endpoint.
 */
async function openMessage(
  ctx: StartContext,
  transport: ReplyOptions['transport'],
  streamedBodies: boolean,
  chars: number,
  progressMs: number,
): Promise<{ started: StartedReply; sink: ReplySink }> {
  if (transport !== 'append' && streamedBodies) {
    try {
      const result = await startStreamed(ctx);
      if ('refused' in result) {
        if (transport === 'stream') throw result.refused;
      } else if (!result.started.replayed) {
        const { started, body } = result;
        return {
          started,
          sink: new StreamSink(
            started,
            body,
            started.events,
            chars * WINDOW_BATCHES,
            progressMs,
            started.cancel,
          ),
        };
      } else {
        // A replay does not read this request's lines: go on through the append endpoint.
        result.body.abort(new AgentMessagingError('replayed start'));
        result.started.cancel();
        return { started: result.started, sink: new AppendSink(ctx.api, result.started, ctx.request) };
      }
    } catch (error) {
      // The start may have been committed before the connection broke: the JSON start below
      // carries the same key, so the service replays that message instead of making another.
      if (!isTransient(error)) throw error;
    }
  }
  const started = await startPlain(ctx);
  // The ids are all the append transport needs from the stream: close it.
  started.cancel();
  return { started, sink: new AppendSink(ctx.api, started, ctx.request) };
}

/** Ends a message a dead writer left streaming: its text stays, marked as cut, and it is completed. */
async function endDeadReply(api: ReplyApi, started: StartedReply, note: string, request: RequestOptions) {
  const sink = new AppendSink(api, started, request);
  if (note !== '') await sink.append(note);
  await sink.complete(note === '' ? '' : note.trim()).catch((error: unknown) => {
    // Another run completed it meanwhile (the service's 10 minute auto-complete, say): it is ended.
    if (!(ConflictError.is(error) && error.code === 'message_not_streaming')) throw error;
  });
}

/** What the start needs. @internal */
interface StartContext {
  api: ReplyApi;
  /** Conversation id, already checked and encoded. */
  conversationId: string;
  /** The checked send shape, `stream: true`. */
  shape: SendMessageRequest;
  request: RequestOptions & { idempotencyKey: string };
  idleTimeoutMs: number | undefined;
  operation: string;
}

/** The message a reply writes to, as `message.started` described it. @internal */
export interface StartedReply {
  messageId: string;
  /** The first text block: the one the reply appends to. */
  blockId: string;
  /** Its position, which is its `part_index` in history. */
  blockIndex: number;
  /** Its text when the stream started (more than the send's text when the start was a replay). */
  appliedText: string;
  /** The rest of the answer's events, still open. */
  events: AsyncIterator<StreamEvent>;
  /** True when the service replayed an earlier start with the same key. */
  replayed: boolean;
  /** Drops the start's connection (both halves). */
  cancel(): void;
}

/** A start the service refused as a streamed body; the caller falls back to append. */
interface Refused {
  refused: unknown;
}

/**
 * The JSON streaming send, read up to `message.started`. The transport retries the request itself;
 * an answer whose stream broke before `message.started` is not the transport's to retry, so it is
 * repeated here once, with the same `Idempotency-Key`: the service replays the same message.
 */
async function startPlain(ctx: StartContext): Promise<StartedReply> {
  try {
    return (await startOnce(ctx, ctx.shape, undefined)) as StartedReply;
  } catch (error) {
    if (!isTransient(error)) throw error;
    return (await startOnce(ctx, ctx.shape, undefined)) as StartedReply;
  }
}

/**
 * The Streamable HTTP start: an NDJSON body whose first line is the send shape, kept open for patch
 * lines. A 415, a 400 or an answer that is not an event stream is a refusal (nothing was created).
 */
async function startStreamed(
  ctx: StartContext,
): Promise<{ started: StartedReply; body: NdjsonBody } | Refused> {
  const body = new NdjsonBody();
  body.line(ctx.shape);
  try {
    const started = await startOnce(ctx, body.stream, body);
    if ('refused' in started) body.abort(started.refused);
    return 'refused' in started ? started : { started, body };
  } catch (error) {
    body.abort(error);
    if (isRefusal(error)) return { refused: error };
    throw error;
  }
}

const isRefusal = (error: unknown) => ApiError.is(error) && (error.status === 415 || error.status === 400);

async function startOnce(
  ctx: StartContext,
  body: SendMessageRequest | ReadableStream<Uint8Array>,
  ndjson: NdjsonBody | undefined,
): Promise<StartedReply | Refused> {
  // The connection's own abort, so a writer can drop it while a read of its answer is pending.
  const connection = new AbortController();
  const user = ctx.request.signal;
  const signal = user === undefined ? connection.signal : AbortSignal.any([user, connection.signal]);
  const response = await ctx.api.transport.raw('messages.send', {
    params: { conversation_id: ctx.conversationId },
    query: { stream: true },
    body,
    contentType: ndjson ? 'application/x-ndjson' : 'application/json',
    accept: 'text/event-stream',
    operation: ctx.operation,
    options: { ...ctx.request, signal },
  });
  const replayed = response.headers.get('idempotent-replayed') === 'true';
  if (ndjson && !isEventStream(response)) {
    await response.body?.cancel().catch(() => {});
    return {
      refused: new InvalidResponseError(
        `${ctx.operation}: the streamed start was not answered with an event stream.`,
      ),
    };
  }
  const stream = messageStreamOf(response, ctx.operation, { idleTimeoutMs: ctx.idleTimeoutMs, signal });
  const events = stream[Symbol.asyncIterator]();
  let first: IteratorResult<StreamEvent>;
  try {
    first = await events.next();
  } catch (error) {
    await events.return?.();
    throw error;
  }
  const event = first.done ? undefined : first.value;
  if (event?.type !== 'message.started') {
    await events.return?.();
    throw new ConnectionError(`${ctx.operation}: the event stream did not begin with message.started.`);
  }
  const blockIndex = event.message.content.findIndex((block) => block.type === 'text');
  const block = event.message.content[blockIndex];
  if (block === undefined) {
    await events.return?.();
    throw new InvalidResponseError(`${ctx.operation}: message.started holds no text block to write to.`, {
      status: response.status,
      requestId: response.headers.get('request-id') ?? undefined,
    });
  }
  return {
    messageId: event.message.id,
    blockId: block.id,
    blockIndex,
    appliedText: block.text ?? '',
    events,
    replayed,
    cancel: () => connection.abort(new AgentMessagingError('the reply no longer reads this stream')),
  };
}
