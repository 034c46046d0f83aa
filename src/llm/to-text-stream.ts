// toTextStream: any model stream a bot is likely to hold, as plain text deltas. Detected by shape,
// so the SDK depends on no model package at run time.
import { ValidationError } from '../core/errors.js';
import { anthropicSnapshot, isMessageStream, type MessageStreamLike } from './message-stream-like.js';
import { type ModelSourceKind, ModelStreamError } from './model-stream-error.js';
import { decoderFor, EXPECTED_SOURCES } from './source-kind.js';
import {
  type Decoder,
  type ModelStopReason,
  type Piece,
  record,
  type ToolCallInfo,
} from './stream-pieces.js';

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
  return pieces(iterable as AsyncIterable<unknown> | Iterable<unknown>, onToolCall, truncatedNote);
}

async function* single(text: string): AsyncGenerator<string> {
  yield text;
}

async function* pieces(
  iterable: AsyncIterable<unknown> | Iterable<unknown>,
  onToolCall: TextStreamOptions['onToolCall'],
  truncatedNote: string,
): AsyncGenerator<string> {
  let kind: ModelSourceKind | undefined;
  let decode: Decoder | undefined;
  const out: Piece[] = [];
  const ending: Ending = { wroteText: false, cutShort: undefined };
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
      yield* drain(out, onToolCall, ending);
    }
    yield* drain(out, onToolCall, ending);
  } catch (error) {
    throw consumedError(error) ?? error;
  }
  if (ending.cutShort === undefined) return;
  if (!ending.wroteText) {
    const why = ending.cutShort === 'length' ? 'its output limit' : 'a content filter';
    throw new ModelStreamError(kind ?? 'text', `the model stopped at ${why} before writing any text`);
  }
  if (truncatedNote !== '') yield truncatedNote;
}

/** How the model's answer ended so far: a stop that cut it short counts only if no text followed. */
interface Ending {
  wroteText: boolean;
  cutShort: ModelStopReason | undefined;
}

async function* drain(
  out: Piece[],
  onToolCall: TextStreamOptions['onToolCall'],
  ending: Ending,
): AsyncGenerator<string> {
  while (out.length > 0) {
    const piece = out.shift() as Piece;
    if (typeof piece === 'string') {
      ending.wroteText = true;
      ending.cutShort = undefined;
      yield piece;
    } else if ('cutShort' in piece) ending.cutShort = piece.cutShort;
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
