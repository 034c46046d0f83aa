// `messages.reply()`: a source of text piped into a reply, with an outcome it can prove
// (issue 11, outcomes 1 and 2). Invariants:
// - no message exists before the source gave its first non-empty chunk: a source that fails or ends
//   before that leaves nothing behind, and its error (or an empty-source error) is thrown;
// - a source that fails after that ends the message marked with the interrupted note, and rethrows;
//   the key's attempt is given up, so a retry writes its answer as a new message.

import { ValidationError } from '../core/errors.js';
import { abortedError } from '../core/retry.js';
import {
  EXPECTED_SOURCES,
  type ModelStreamSource,
  type TextStreamOptions,
  toTextStream,
} from '../llm/to-text-stream.js';
import type { ReplyOptions, ReplyResult, StreamBody } from './options.js';
import { startReply } from './reply-start.js';
import type { ReplyApi, ReplyWriter } from './reply-writer.js';

/** Options of `messages.reply()`: the start's fields and the reply's options together. */
export interface PipeReplyOptions extends ReplyOptions, StreamBody, TextStreamOptions {}

/**
 * What `messages.reply()` accepts as its source of text: text chunks, or a model stream that
 * toTextStream reads (OpenAI, AI SDK, Anthropic).
 */
export type ReplySource = ModelStreamSource;

/**
 * The one place a reply's source becomes plain text chunks (model streams are turned into text
 * here). Anything else is a ValidationError naming `chunks`, before anything is sent.
 * @internal
 */
export function replySource(
  source: unknown,
  operation: string,
  onToolCall?: TextStreamOptions['onToolCall'],
): AsyncIterable<string> {
  if (typeof source === 'object' && source !== null) {
    if (Symbol.asyncIterator in source || Symbol.iterator in source || 'fullStream' in source) {
      // Model streams become text here (tool calls go to onToolCall, never into the text): checked
      // and read as toTextStream checks and reads them.
      const options = onToolCall === undefined ? {} : { onToolCall };
      return toTextStream(source as ModelStreamSource, options);
    }
  }
  const message = `must be ${EXPECTED_SOURCES}`;
  throw new ValidationError([{ field: 'chunks', message }], operation);
}

/**
 * Pipes a stream of text (an LLM's tokens, say) into a reply and completes it. The message is made
 * at the first non-empty chunk; a source that fails after that leaves the reply completed with the
 * interrupted note and rethrows. `signal` ends the reply the same way, without an error: outcome
 * `interrupted` (before the first chunk it rejects with RequestAbortedError, nothing sent).
 *
 * @example
 * const { message_id, outcome } = await client.messages.reply(cnv, llm.textStream, { replyToMessageId });
 */
export async function pipeReply(
  api: ReplyApi,
  conversationId: string,
  chunks: ReplySource,
  options: PipeReplyOptions = {},
): Promise<ReplyResult> {
  const operation = 'messages.reply';
  const { content, fallbackText, replyToMessageId, metadata, signal, onToolCall, ...replyOptions } =
    options ?? {};
  const iterator = replySource(chunks, operation, onToolCall)[Symbol.asyncIterator]();
  // A signal that fires rejects `stopped` with `stop`, so a pending `next()` is left at once.
  const done = new AbortController();
  let stop: unknown;
  const stopped = new Promise<never>((_, reject) => {
    const onAbort = () => {
      stop = abortedError(signal as AbortSignal);
      reject(stop);
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true, signal: done.signal });
  });
  stopped.catch(() => {});
  const next = () => Promise.race([iterator.next(), stopped]);
  const leave = () => void Promise.resolve(iterator.return?.()).catch(() => {});
  let writer: ReplyWriter | undefined;
  try {
    // Nothing written, nothing shown: the first non-empty chunk makes the message.
    let chunk: IteratorResult<string>;
    do chunk = await next();
    while (!chunk.done && chunk.value === '');
    if (chunk.done) {
      const message =
        'gave no text (an empty source, or a model that ended without output): nothing was sent';
      throw new ValidationError([{ field: 'chunks', message }], operation);
    }
    writer = await startReply(api, conversationId, { content, replyToMessageId, metadata }, replyOptions);
    if (writer.replayed) {
      // An earlier run of this key finished the reply: this one's text is not sent again.
      leave();
      return await writer.complete();
    }
    for (; !chunk.done; chunk = await next()) await writer.write(chunk.value);
    return await writer.complete({ fallbackText });
  } catch (error) {
    leave();
    if (writer === undefined || writer.replayed) throw error;
    if (stop !== undefined && error === stop) return writer.interrupt();
    // The source, the last text or the completion failed: the reply is still ended marked, if it can be.
    await writer.interrupt().catch(() => {});
    throw error;
  } finally {
    done.abort();
  }
}
