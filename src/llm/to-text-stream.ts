// toTextStream: any model stream a bot is likely to hold, as plain text deltas. Detected by shape,
// so the SDK depends on no model package at run time.
import { ValidationError } from '../core/errors.js';
import { anthropicSnapshot, isMessageStream, type MessageStreamLike } from './message-stream-like.js';
import type { ModelSourceKind } from './model-stream-error.js';
import { decoderFor, EXPECTED_SOURCES } from './source-kind.js';
import { type Decoder, type Piece, record, type ToolCallInfo } from './stream-pieces.js';

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
}

const CONTEXT = 'toTextStream';
// Each stream a bot can read only once: a second read is a bug that would otherwise show as an
// empty reply (a generator that is done) or a hang (a MessageStream that already ended).
const read = new WeakSet<object>();

const invalid = (message: string, field = 'source') => new ValidationError([{ field, message }], CONTEXT);

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
  return pieces(iterable as AsyncIterable<unknown> | Iterable<unknown>, onToolCall);
}

async function* single(text: string): AsyncGenerator<string> {
  yield text;
}

async function* pieces(
  iterable: AsyncIterable<unknown> | Iterable<unknown>,
  onToolCall: TextStreamOptions['onToolCall'],
): AsyncGenerator<string> {
  let kind: ModelSourceKind | undefined;
  let decode: Decoder | undefined;
  const out: Piece[] = [];
  let index = 0;
  if (isMessageStream(iterable)) {
    // An event-emitting stream (Anthropic's MessageStream, openai's runners) hands its iterator only
    // the events after the iterator is made, and never settles one made after it failed: its
    // failure is read first, and what came before is in its snapshot, read in the same tick.
    if (iterable.errored) await iterable.done();
    const events = (iterable as MessageStreamLike)[Symbol.asyncIterator]();
    const earlier = anthropicSnapshot(iterable);
    iterable = { [Symbol.asyncIterator]: () => events };
    for (const event of earlier) {
      if (decode === undefined) ({ kind, decode } = decoderFor(event, 0) ?? {});
      decode?.(event, out);
    }
  }
  try {
    for await (const event of iterable) {
      if (kind === 'text' || (kind === undefined && typeof event === 'string')) {
        kind = 'text';
        if (typeof event !== 'string') {
          throw invalid(
            `yielded a ${event === null ? 'null' : typeof event} at index ${index} after strings`,
          );
        }
        index += 1;
        if (event !== '') yield event;
        continue;
      }
      if (decode === undefined) {
        const chosen = decoderFor(event, index);
        kind = chosen?.kind;
        decode = chosen?.decode;
      }
      index += 1;
      decode?.(event, out);
      yield* drain(out, onToolCall);
    }
    yield* drain(out, onToolCall);
  } catch (error) {
    throw consumedError(error) ?? error;
  }
}

async function* drain(out: Piece[], onToolCall: TextStreamOptions['onToolCall']): AsyncGenerator<string> {
  while (out.length > 0) {
    const piece = out.shift() as Piece;
    if (typeof piece === 'string') yield piece;
    else await onToolCall?.(piece);
  }
}

// The openai package refuses a second read of its Stream with a plain error: name it as bad input.
function consumedError(error: unknown): ValidationError | undefined {
  if (error instanceof Error && error.message.startsWith('Cannot iterate over a consumed stream')) {
    return invalid('was already read: a stream can be read once (use its .tee())');
  }
  return undefined;
}
