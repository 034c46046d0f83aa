// What toTextStream takes, checked when the call is made (bad input is a ValidationError at once):
// toTextStream (to-text-stream.ts) and a reply (pipe-reply.ts) both start here, and hand the checked
// stream to the decoders (text-pieces.ts).
import { ValidationError } from '../core/errors.js';
import { isMessageStream } from './message-stream-like.js';
import { record, type ToolCallInfo } from './stream-pieces.js';

/** What toTextStream accepts, in the words of its errors. @internal */
export const EXPECTED_SOURCES =
  'an AsyncIterable<string>, an OpenAI chat-completions or Responses stream, an AI SDK streamText result or its fullStream, or an Anthropic MessageStream or its events';

/** Anything toTextStream reads: text chunks, a model SDK's stream, or an AI SDK `streamText` result. */
export type ModelStreamSource =
  | AsyncIterable<unknown>
  | Iterable<string>
  | { readonly fullStream: AsyncIterable<unknown> };

/** Options of {@link toTextStream}. */
export interface TextStreamOptions {
  /**
   * Called once per tool call the model starts, before its result; the call's text (its
   * arguments) is never part of the stream. Awaited, so a status line can be posted first.
   * @example onToolCall: (call) => console.log(`Running ${call.name}…`)
   */
  onToolCall?: (call: ToolCallInfo) => unknown;
  /**
   * Written after the text when the model stopped before it was done: it reached its output limit
   * (`max_tokens`, `max_output_tokens`) or a content filter ended it. A reader must be able to tell a
   * cut answer from a whole one; `''` writes nothing (then tell the user yourself). A model that
   * stopped so before writing any text is a ModelStreamError.
   * @default ' … [truncated]'
   */
  truncatedNote?: string;
}

/** What toTextStream writes after a model's text that its output limit or a filter cut short. */
export const DEFAULT_TRUNCATED_NOTE = ' … [truncated]';

/** The operation toTextStream's errors name. @internal */
export const CONTEXT = 'toTextStream';
// Each stream a bot can read only once: a second read is a bug that would otherwise show as an
// empty reply (a generator that is done) or a hang (a MessageStream that already ended).
const read = new WeakSet<object>();

/** A ValidationError of toTextStream naming `field`. @internal */
export const invalid = (message: string, field = 'source') =>
  new ValidationError([{ field, message }], CONTEXT);

/** What reads a checked stream into text: the decoders (text-pieces.ts). @internal */
export type PiecesOf = (
  iterable: AsyncIterable<unknown> | Iterable<unknown>,
  onToolCall: TextStreamOptions['onToolCall'],
  truncatedNote: string,
) => AsyncGenerator<string>;

/**
 * Checks `source` and `options` as toTextStream documents (a ValidationError naming the field) and
 * answers the text `piecesOf` reads from it; a plain string is its own text.
 * @internal
 */
export function textStreamOf(
  source: ModelStreamSource,
  options: TextStreamOptions,
  piecesOf: PiecesOf,
): AsyncGenerator<string> {
  const onToolCall = options?.onToolCall;
  if (onToolCall !== undefined && typeof onToolCall !== 'function') {
    throw invalid('must be a function', 'onToolCall');
  }
  const truncatedNote = options?.truncatedNote ?? DEFAULT_TRUNCATED_NOTE;
  if (typeof truncatedNote !== 'string') throw invalid('must be a string', 'truncatedNote');
  if (typeof source === 'string') return single(source);
  const fields = record(source);
  // An AI SDK result: its full stream says when the model failed, where `textStream` just ends.
  const stream =
    fields && 'fullStream' in fields && !(Symbol.asyncIterator in fields) ? fields.fullStream : source;
  const iterable = record(stream);
  if (!iterable || !(Symbol.asyncIterator in iterable || Symbol.iterator in iterable)) {
    throw invalid(`must be ${EXPECTED_SOURCES}`);
  }
  if (read.has(iterable) || (iterable as { locked?: unknown }).locked === true) {
    throw invalid('was already read: a stream can be read once (tee it, or pass the AI SDK result itself)');
  }
  if (isMessageStream(iterable) && iterable.ended && !iterable.errored) {
    throw invalid('is an Anthropic MessageStream that already ended: pass it before reading it');
  }
  read.add(iterable);
  return piecesOf(iterable as AsyncIterable<unknown> | Iterable<unknown>, onToolCall, truncatedNote);
}

async function* single(text: string): AsyncGenerator<string> {
  yield text;
}
