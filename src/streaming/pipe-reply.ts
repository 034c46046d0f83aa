// `messages.reply()`: a source of text piped into a reply.
import { ValidationError } from '../core/errors.js';
import type { Messages } from '../resources/messages.js';
import type { ReplyOptions, ReplyResult } from './options.js';
import { startReply } from './reply-start.js';
import type { StreamBody } from './send-shape.js';

/** Options of `messages.reply()`: the start's fields and the reply's options together. */
export interface PipeReplyOptions extends ReplyOptions, StreamBody {}

/**
 * Pipes a stream of text (an LLM's tokens, say) into a reply and completes it. If the source
 * throws, the reply is completed with what was written and the source's error is rethrown; a
 * retry with the same key then answers that completed reply instead of writing another.
 *
 * @example
 * const { message_id } = await pipeReply(client.messages, cnv, llm.textStream, { replyToMessageId });
 */
export async function pipeReply(
  messages: Messages,
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
    messages,
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
