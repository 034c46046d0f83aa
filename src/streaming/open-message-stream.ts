// `messages.stream()`: the streaming send, and its answer read as a MessageStream.
import { InvalidResponseError } from '../core/errors.js';
import type { Transport } from '../core/transport.js';
import { pathId } from '../core/validate.js';
import { ConversationId } from '../schemas/common.js';
import { MessageStream } from './message-stream.js';
import {
  checkReplyOptions,
  type StreamBody,
  type StreamOptions,
  startKey,
  streamingSendShape,
} from './options.js';

/**
 * Starts a streamed message with the JSON streaming send (`?stream=true`, with an `Idempotency-Key`)
 * and returns its events as a MessageStream. A retry after a lost connection replays the same
 * `message.started`, so it never creates a second message.
 *
 * @example
 * const stream = await openMessageStream(transport, cnv, { replyToMessageId }, { idleTimeoutMs: 90_000 });
 * for await (const event of stream) console.log(event.type);
 */
export async function openMessageStream(
  transport: Transport,
  conversationId: string,
  body?: StreamBody,
  options?: StreamOptions,
): Promise<MessageStream> {
  const context = 'messages.stream';
  pathId(ConversationId, conversationId, 'conversationId', context);
  const checked = checkReplyOptions(options, context);
  const shape = streamingSendShape(body, context);
  const idempotencyKey = startKey(checked.request.idempotencyKey, checked.eventId);
  const response = await transport.raw('messages.send', {
    params: { conversation_id: conversationId },
    query: { stream: true },
    body: shape,
    accept: 'text/event-stream',
    operation: context,
    options: { ...checked.request, idempotencyKey },
  });
  return messageStreamOf(response, context, {
    idleTimeoutMs: checked.idleTimeoutMs,
    signal: checked.request.signal,
  });
}

/** The MessageStream of a 2xx answer, or an InvalidResponseError when it is not an event stream. @internal */
export function messageStreamOf(
  response: Response,
  operation: string,
  options: { idleTimeoutMs?: number | undefined; signal?: AbortSignal | undefined },
): MessageStream {
  const requestId = response.headers.get('request-id') ?? undefined;
  if (!isEventStream(response) || response.body === null) {
    response.body?.cancel().catch(() => {});
    throw new InvalidResponseError(
      `${operation}: expected a text/event-stream answer, got ${response.headers.get('content-type') ?? 'no content-type'}.`,
      { status: response.status, requestId },
    );
  }
  return new MessageStream(response.body, { ...options, requestId });
}

/** True when the answer is an SSE stream. @internal */
export function isEventStream(response: Response): boolean {
  return /^text\/event-stream\b/i.test(response.headers.get('content-type') ?? '');
}
