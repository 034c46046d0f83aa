// `messages.startReply()` and `messages.reply()`: choose the transport, start, hand back a ReplyWriter.
import { AgentMessagingError, ValidationError } from '../core/errors.js';
import { isTransient } from '../core/retry.js';
import type { Transport } from '../core/transport.js';
import { pathId } from '../core/validate.js';
import { ConversationId } from '../schemas/common.js';
import { MAX_MESSAGE_TEXT } from '../schemas/messages.js';
import { checkReplyOptions, type ReplyOptions, type ReplyResult } from './options.js';
import { readBack } from './read-back.js';
import { AppendSink, type ReplySink, StreamSink } from './reply-sinks.js';
import { type StartContext, type StartedReply, startWithJson, startWithNdjson } from './reply-start.js';
import { ReplyWriter } from './reply-writer.js';
import { initialBlockText, type StreamBody, startKey, streamingSendShape } from './send-shape.js';
import { supportsStreamedBodies } from './streamed-bodies.js';

// Unacknowledged text allowed on a Streamable HTTP reply, in batches.
const WINDOW_BATCHES = 4;

/**
 * Starts a streamed reply and returns its writer. `transport: 'stream'` sends one Streamable HTTP
 * request; `append` uses the append and complete endpoints; `auto` (default) streams when the
 * runtime can send a streamed body and falls back to append when the service refuses it (415, 400,
 * or an answer that is not an event stream). The start carries an `Idempotency-Key` (derived from
 * `eventId` when given), so retrying it never creates a second message; when it replays a message
 * already completed, the writer is finished: writes are dropped and `complete()` answers that message.
 *
 * @example
 * const reply = await startReply(transport, cnv, { replyToMessageId }, { eventId: event.eventId });
 * await reply.write('Hello');
 * await reply.complete();
 */
export async function startReply(
  transport: Transport,
  conversationId: string,
  body?: StreamBody,
  options?: ReplyOptions,
): Promise<ReplyWriter> {
  const operation = 'messages.startReply';
  const cnv = pathId(ConversationId, conversationId, 'conversationId', operation);
  const checked = checkReplyOptions(options, operation);
  const shape = streamingSendShape(body, operation);
  const streamedBodies = checked.streamedBodies ?? supportsStreamedBodies();
  if (checked.transport === 'stream' && !streamedBodies) {
    const message =
      "is 'stream', but this runtime cannot send a streamed request body (use 'auto' or 'append')";
    throw new ValidationError([{ field: 'transport', message }], operation);
  }
  const idempotencyKey = startKey(checked.request.idempotencyKey, checked.eventId);
  const ctx: StartContext = {
    transport,
    conversationId: cnv,
    shape,
    request: { ...checked.request, idempotencyKey },
    idleTimeoutMs: checked.idleTimeoutMs,
    operation,
  };
  const appendSink = (started: StartedReply) => {
    // The ids are all the append transport needs from the stream: close it.
    started.events.return?.().catch(() => {});
    return new AppendSink(transport, started, ctx.request, operation);
  };
  let started: StartedReply | undefined;
  let sink: ReplySink | undefined;
  if (checked.transport !== 'append' && streamedBodies) {
    try {
      const result = await startWithNdjson(ctx);
      if ('refused' in result) {
        if (checked.transport === 'stream') throw result.refused;
      } else if (result.started.replayed) {
        // A replay does not read this request's lines: go on through the append endpoint.
        result.body.abort(new AgentMessagingError('replayed start'));
        started = result.started;
        sink = appendSink(started);
      } else {
        started = result.started;
        sink = new StreamSink(started, result.body, started.events, checked.coalesce.chars * WINDOW_BATCHES);
      }
    } catch (error) {
      // The start may have been committed before the connection broke: the JSON retry below
      // carries the same key, so the service replays that message instead of making another.
      if (!isTransient(error)) throw error;
    }
  }
  if (started === undefined || sink === undefined) {
    started = await startWithJson(ctx);
    sink = appendSink(started);
  }
  // A replayed start may be of a message an earlier run (a delivery the service retried) already
  // completed: that message holds its final text, so this writer is finished before it writes.
  const finished = started.replayed
    ? await readBack(transport, cnv, started.messageId, started.blockIndex, ctx.request, operation)
    : undefined;
  const initialText = initialBlockText(shape);
  const shapeText = shape.content.reduce(
    (sum, block) => sum + (block.type === 'text' ? block.text.length : 0),
    0,
  );
  return new ReplyWriter({
    transport,
    conversationId: cnv,
    messageId: started.messageId,
    blockId: started.blockId,
    blockIndex: started.blockIndex,
    initialText,
    appliedText: started.appliedText,
    room: MAX_MESSAGE_TEXT - shapeText,
    fallbackText: shape.fallbackText,
    sink,
    ...(finished && finished.status !== 'streaming' ? { finished } : {}),
    request: ctx.request,
    coalesce: checked.coalesce,
    operation,
  });
}

/** Options of `messages.reply()`: the start's fields and the reply's options together. */
export interface PipeReplyOptions extends ReplyOptions, StreamBody {}

/**
 * Pipes a stream of text (an LLM's tokens, say) into a reply and completes it. If the source
 * throws, the reply is completed with what was written and the source's error is rethrown; a
 * retry with the same key then answers that completed reply instead of writing another.
 *
 * @example
 * const { message_id } = await pipeReply(transport, cnv, llm.textStream, { replyToMessageId });
 */
export async function pipeReply(
  transport: Transport,
  conversationId: string,
  chunks: AsyncIterable<string> | Iterable<string>,
  options: PipeReplyOptions = {},
): Promise<ReplyResult> {
  if (!isIterable(chunks)) {
    const message = 'must be an AsyncIterable or Iterable of strings';
    throw new ValidationError([{ field: 'chunks', message }], 'messages.reply');
  }
  const { content, fallbackText, replyToMessageId, metadata, ...replyOptions } = options ?? {};
  const writer = await startReply(
    transport,
    conversationId,
    { content, replyToMessageId, metadata },
    replyOptions,
  );
  try {
    for await (const chunk of chunks) await writer.write(chunk);
  } catch (error) {
    await writer.complete({ fallbackText }).catch(() => {});
    throw error;
  }
  return writer.complete({ fallbackText });
}

function isIterable(value: unknown): value is AsyncIterable<string> | Iterable<string> {
  if (typeof value !== 'object' || value === null) return false;
  return Symbol.asyncIterator in value || Symbol.iterator in value;
}
