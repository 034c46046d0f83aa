// toTextStream: any model stream a bot is likely to hold, as plain text deltas. Detected by shape,
// so the SDK depends on no model package at run time. This module holds the checks, made when the
// call is; the decoders (text-pieces.ts) load with the first piece read, unless a reply loaded them
// already: the main entry exports toTextStream, and a bundler that splits by module (esbuild) would
// bring every model's decoder up front with it.
import { ValidationError } from '../core/errors.js';
import { loadOnUse } from '../core/load-on-use.js';
import { isMessageStream } from './message-stream-like.js';
import { record, type ToolCallInfo } from './stream-pieces.js';

type TextPieces = typeof import('./text-pieces.js');

// The decoders once loaded: a stream read after that has no extra step per piece.
let textPieces: TextPieces | undefined;

/** Hands the loaded decoders over, so streams from here on start without a load. @internal */
export function useTextPieces(loaded: TextPieces): void {
  textPieces ??= loaded;
}

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

const CONTEXT = 'toTextStream';
// Each stream a bot can read only once: a second read is a bug that would otherwise show as an
// empty reply (a generator that is done) or a hang (a MessageStream that already ended).
const read = new WeakSet<object>();

/** A ValidationError of toTextStream naming `field`. @internal */
export const invalid = (message: string, field = 'source') =>
  new ValidationError([{ field, message }], CONTEXT);

/**
 * Turns a model stream into its text deltas: `AsyncIterable<string>`; an OpenAI chat-completions
 * stream (`delta.content`) or Responses stream (`response.output_text.delta`); an AI SDK
 * `streamText` result (its `fullStream` is read, so a 401 is an error, not an empty text) or
 * `fullStream`; an Anthropic `MessageStream` or its raw events. Tool calls reach `onToolCall` and
 * never the text; the text of a step after a tool call starts after a blank line. A failure the
 * stream reports as data (an `error` part, `response.failed`) is thrown as a ModelStreamError.
 * An unknown shape, a non-string in a text stream or a stream already read: a ValidationError.
 *
 * @example
 * const stream = await openai.chat.completions.create({ model, messages, stream: true });
 * for await (const text of toTextStream(stream)) process.stdout.write(text);
 */
export function toTextStream(
  source: ModelStreamSource,
  options: TextStreamOptions = {},
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
  const events = iterable as AsyncIterable<unknown> | Iterable<unknown>;
  if (textPieces !== undefined) return textPieces.pieces(events, onToolCall, truncatedNote);
  return loadedPieces(events, onToolCall, truncatedNote);
}

// The decoders are loaded by the first `next()`; a failed load is a ConnectionError, and not kept.
async function* loadedPieces(
  events: AsyncIterable<unknown> | Iterable<unknown>,
  onToolCall: TextStreamOptions['onToolCall'],
  truncatedNote: string,
): AsyncGenerator<string> {
  // They come with the reply module (no chunk of their own for a bundler to split apart).
  textPieces ??= (await loadOnUse(() => import('../streaming/pipe-reply.js'), CONTEXT)).textPieces;
  yield* textPieces.pieces(events, onToolCall, truncatedNote);
}

async function* single(text: string): AsyncGenerator<string> {
  yield text;
}
