// Starting a reply: the streaming send in either form, up to `message.started` and its ids.
import { ApiError } from '../core/api-error.js';
import { ConnectionError, InvalidResponseError } from '../core/errors.js';
import type { RequestOptions } from '../core/options.js';
import { isTransient, retryDelayMs, sleep } from '../core/retry.js';
import type { Transport } from '../core/transport.js';
import type { SendMessageRequest } from '../schemas/messages.js';
import type { StreamEvent } from '../schemas/stream.js';
import { NdjsonBody } from './ndjson-body.js';
import { isEventStream, messageStreamOf } from './open-stream.js';

/** What the start needs. @internal */
export interface StartContext {
  transport: Transport;
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
}

const MAX_START_ATTEMPTS = 3;

/**
 * The JSON streaming send, read up to `message.started`. A connection lost before that event is
 * retried with the same `Idempotency-Key`: the service replays the same message, never a second one.
 * @internal
 */
export async function startWithJson(ctx: StartContext): Promise<StartedReply> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await startOnce(ctx, ctx.shape, undefined)) as StartedReply;
    } catch (error) {
      if (attempt >= MAX_START_ATTEMPTS || !isTransient(error)) throw error;
      const delayMs = retryDelayMs(error, attempt);
      if (delayMs === undefined) throw error;
      await sleep(delayMs, ctx.request.signal);
    }
  }
}

/** A start the service refused as a streamed body; the caller falls back to append. @internal */
export interface Refused {
  refused: unknown;
}

/**
 * The Streamable HTTP start: an NDJSON body whose first line is the send shape, kept open for patch
 * lines. A 415, a 400 or an answer that is not an event stream is a refusal (nothing was created).
 * @internal
 */
export async function startWithNdjson(
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
  const response = await ctx.transport.raw({
    method: 'POST',
    path: `/v1/conversations/${ctx.conversationId}/messages`,
    query: { stream: true },
    body,
    contentType: ndjson ? 'application/x-ndjson' : 'application/json',
    accept: 'text/event-stream',
    requiresIdempotencyKey: true,
    operation: ctx.operation,
    options: ctx.request,
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
  const stream = messageStreamOf(response, ctx.operation, {
    idleTimeoutMs: ctx.idleTimeoutMs,
    signal: ctx.request.signal,
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
  };
}
