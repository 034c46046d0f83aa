// Opening a reply's message: the streaming send in either form, read up to `message.started`,
// and the sink that feeds it (patch lines on the open request, or the append endpoint).
import { ApiError } from '../core/api-error.js';
import { AgentMessagingError, ConnectionError, InvalidResponseError } from '../core/errors.js';
import { isTransient } from '../core/retry.js';
import type { SendMessageRequest } from '../schemas/messages.js';
import type { StreamEvent } from '../schemas/stream.js';
import { isEventStream, messageStreamOf } from './message-stream.js';
import { NdjsonBody } from './ndjson-body.js';
import type { CheckedReplyOptions } from './options.js';
import { AppendSink, type ReplyApi, type ReplySink } from './reply-sinks.js';
import { StreamSink } from './stream-sink.js';

// Unacknowledged text allowed on a Streamable HTTP reply, in batches.
const WINDOW_BATCHES = 4;

/**
 * Starts the message in the chosen transport: the Streamable HTTP start when it can (a refusal or a
 * broken start falls back to the JSON start with the same key, which replays a committed message),
 * else the JSON start, whose sink is the append endpoint.
 */
export async function openMessage(ctx: StartContext): Promise<{ started: StartedReply; sink: ReplySink }> {
  const { transport, coalesce, progressTimeoutMs, request } = ctx.checked;
  if (transport !== 'append' && ctx.streamedBodies) {
    try {
      const { started, body } = await startStreamed(ctx);
      if (!started.replayed) {
        return {
          started,
          sink: new StreamSink(started, body, coalesce.chars * WINDOW_BATCHES, progressTimeoutMs),
        };
      }
      // A replay does not read this request's lines: go on through the append endpoint.
      body.abort(new AgentMessagingError('replayed start'));
      started.cancel();
      return { started, sink: new AppendSink(ctx.api, started, request) };
    } catch (error) {
      // A refusal created nothing: `auto` falls back to the JSON start below. A start that broke may
      // have been committed: the JSON start carries the same key, so the service replays that message.
      if (isRefusal(error) ? transport === 'stream' : !isTransient(error)) throw error;
    }
  }
  const started = await startPlain(ctx);
  // The ids are all the append transport needs from the stream: close it.
  started.cancel();
  return { started, sink: new AppendSink(ctx.api, started, request) };
}

/** What opening a reply's message needs. @internal */
export interface StartContext {
  api: ReplyApi;
  /** Conversation id, already checked. */
  conversationId: string;
  /** The checked send shape, `stream: true`. */
  shape: SendMessageRequest;
  checked: CheckedReplyOptions;
  /** Whether this runtime can send a streamed request body. */
  streamedBodies: boolean;
  operation: string;
  /** The Idempotency-Key of this attempt's message. */
  idempotencyKey: string;
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

/**
 * The JSON streaming send, read up to `message.started`. The transport retries the request itself;
 * an answer whose stream broke before `message.started` is not the transport's to retry, so it is
 * repeated here once, with the same `Idempotency-Key`: the service replays the same message.
 */
async function startPlain(ctx: StartContext): Promise<StartedReply> {
  try {
    return await startOnce(ctx);
  } catch (error) {
    if (!isTransient(error)) throw error;
    return await startOnce(ctx);
  }
}

/**
 * The Streamable HTTP start: an NDJSON body whose first line is the send shape, kept open for patch
 * lines. A 415, a 400 or an answer that is not an event stream is a refusal (nothing was created).
 */
async function startStreamed(ctx: StartContext): Promise<{ started: StartedReply; body: NdjsonBody }> {
  const body = new NdjsonBody();
  body.line(ctx.shape);
  try {
    return { started: await startOnce(ctx, body), body };
  } catch (error) {
    body.abort(error);
    throw error;
  }
}

// The streamed starts' answers that were not an event stream: refusals, as a 415 or a 400 is.
const notEventStreams = new WeakSet<object>();
const isRefusal = (error: unknown) =>
  (ApiError.is(error) && (error.status === 415 || error.status === 400)) ||
  (error instanceof InvalidResponseError && notEventStreams.has(error));

/** One start: the JSON send shape, or the NDJSON body of a streamed start. */
async function startOnce(ctx: StartContext, ndjson?: NdjsonBody): Promise<StartedReply> {
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
    options: { ...ctx.checked.request, idempotencyKey: ctx.idempotencyKey, signal },
  });
  const replayed = response.headers.get('idempotent-replayed') === 'true';
  if (ndjson && !isEventStream(response)) {
    await response.body?.cancel().catch(() => {});
    const refused = new InvalidResponseError(
      `${ctx.operation}: the streamed start was not answered with an event stream.`,
    );
    notEventStreams.add(refused);
    throw refused;
  }
  const stream = messageStreamOf(response, ctx.operation, {
    idleTimeoutMs: ctx.checked.idleTimeoutMs,
    signal,
  });
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
