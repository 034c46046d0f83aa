// toTextStream: any model stream a bot is likely to hold, as plain text deltas. Detected by shape,
// so the SDK depends on no model package at run time. The source and options are checked when the
// call is made (bad input is a ValidationError at once); the stream is read as the text is pulled,
// by the decoder of the kind its first telling event shows. A reply (pipe-reply.ts) reads its
// source through here too.
import { ValidationError } from '../core/errors.js';
import { annotateActive } from '../telemetry.js';
import { endedEarly, failureDetail, type ModelSourceKind, ModelStreamError } from './model-stream-error.js';
import { STREAM_FORMATS, type StreamFormat } from './stream-formats.js';
import { Reading, record, type ToolCallInfo } from './stream-pieces.js';

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
  const truncatedNote = options?.truncatedNote ?? ' … [truncated]';
  if (typeof truncatedNote !== 'string') throw invalid('must be a string', 'truncatedNote');
  if (typeof source === 'string') return pieces([source], onToolCall, truncatedNote);
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

/** The text of `iterable`, its tool calls to `onToolCall`, `truncatedNote` after a cut answer. */
async function* pieces(
  iterable: AsyncIterable<unknown> | Iterable<unknown>,
  onToolCall: TextStreamOptions['onToolCall'],
  truncatedNote: string,
): AsyncGenerator<string> {
  let text = false; // the source yields strings
  let format: StreamFormat | undefined;
  let reading = new Reading('text');
  let index = 0;
  // An event-emitting stream (Anthropic's MessageStream, openai's runners) hands its iterator only
  // the events after the iterator is made, never settles one made after it failed, and ends it
  // quietly when it fails while no read is waiting; its `done()` settles with the failure.
  const emitter: MessageStreamLike | undefined = isMessageStream(iterable) ? iterable : undefined;
  if (emitter) {
    // Its failure is read first, and what came before is in its snapshot, read in the same tick and
    // given at once (the model may be slow to send its next event).
    if (emitter.errored) await emitter.done();
    const events = emitter[Symbol.asyncIterator]();
    const earlier = anthropicSnapshot(emitter);
    iterable = (async function* () {
      yield* earlier;
      yield* { [Symbol.asyncIterator]: () => events };
    })();
  }
  try {
    for await (const event of iterable) {
      if (text || (format === undefined && typeof event === 'string')) {
        text = true;
        if (typeof event !== 'string') {
          throw invalid(
            `yielded a ${event === null ? 'null' : typeof event} at index ${index} after strings`,
          );
        }
        index += 1;
        if (event !== '') yield event;
        continue;
      }
      const fields = record(event);
      // A model's events are objects: a string among them is a mixed-up source, not text to drop.
      if (fields === undefined) {
        const expected = format ? ` among ${format.kind} events` : `; expected ${EXPECTED_SOURCES}`;
        throw invalid(`yielded ${describe(event)} at index ${index}${expected}`);
      }
      if (format === undefined) {
        format = formatOf(fields, index);
        if (format) reading = new Reading(format.kind);
      }
      index += 1;
      format?.read(fields, reading);
      for (const piece of reading.out.splice(0)) {
        if (typeof piece === 'string') yield piece;
        else await onToolCall?.(piece);
      }
    }
    // The end is checked, not trusted: an emitter's iterator may have dropped its failure, and any
    // stream ends quietly on a connection closed early, without the event that closes an answer.
    await emitter?.done();
    if (format && !reading.finished) throw endedEarly(format.kind, format.finish);
  } catch (error) {
    // The openai package refuses a second read of its Stream with a plain error: name it as bad input.
    if (error instanceof Error && error.message.startsWith('Cannot iterate over a consumed stream')) {
      throw invalid('was already read: a stream can be read once (use its .tee())');
    }
    throw error;
  }
  const { cutShort, wroteText } = reading;
  if (cutShort === undefined) return;
  if (!wroteText) {
    const why = cutShort === 'length' ? 'its output limit' : 'a content filter';
    throw new ModelStreamError(reading.kind, `the model stopped at ${why} before writing any text`);
  }
  if (truncatedNote !== '') yield truncatedNote;
}

/** The format an event shows, or undefined for an event every kind may send (a ping). */
function formatOf(fields: Record<string, unknown>, index: number): StreamFormat | undefined {
  const format = STREAM_FORMATS.find((candidate) => candidate.matches(fields));
  if (format) {
    // The reply's span learns which model system answers (GenAI semantic conventions, where known).
    annotateActive({ 'gen_ai.provider.name': format.provider, 'reply.source': format.kind });
    return format;
  }
  if (fields.type === 'ping') return undefined;
  // Every kind reports a failure as `{ type: 'error', ... }`: a failure whatever the kind.
  if (fields.type === 'error') {
    const error = fields.error ?? fields;
    throw new ModelStreamError(guessKind(fields), failureDetail(error), error);
  }
  throw invalid(`yielded ${describe(fields)} at index ${index}; expected ${EXPECTED_SOURCES}`);
}

function guessKind(fields: Record<string, unknown>): ModelSourceKind {
  if ('sequence_number' in fields) return 'openai-responses';
  if (typeof record(fields.error)?.type === 'string') return 'anthropic';
  return 'ai-sdk';
}

/** A short, content-free description of a value, for an error message (no user text in errors). */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  // A response body's bytes, say `toTextStreamResponse().body`: text, but not yet decoded.
  if (ArrayBuffer.isView(value)) return 'bytes (decode them, e.g. with TextDecoderStream)';
  if (typeof value !== 'object') return `a ${typeof value}`;
  const type = (value as Record<string, unknown>).type;
  if (typeof type === 'string') return `an object of type '${type.slice(0, 40)}'`;
  const keys = Object.keys(value).slice(0, 5);
  return keys.length === 0 ? 'an empty object' : `an object with keys ${keys.join(', ')}`;
}

/** The parts of @anthropic-ai/sdk's MessageStream relied on, seen by shape: an event emitter whose async iterator yields raw events. */
interface MessageStreamLike extends AsyncIterable<unknown> {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  done(): Promise<void>;
  readonly ended: boolean;
  readonly errored: boolean;
  readonly currentMessage?: unknown;
}

/** True for an Anthropic MessageStream (or anything built like one). */
function isMessageStream(value: object): value is MessageStreamLike {
  const fields = value as Record<string, unknown>;
  return (
    typeof fields.on === 'function' &&
    typeof fields.done === 'function' &&
    typeof fields.ended === 'boolean' &&
    typeof fields.errored === 'boolean' &&
    Symbol.asyncIterator in value
  );
}

/**
 * The content a MessageStream received before it was read, as `content_block_start` events: a text
 * block holds all its text so far, so the events that follow continue it exactly.
 */
function anthropicSnapshot(stream: MessageStreamLike): unknown[] {
  const content = record(stream.currentMessage)?.content;
  if (!Array.isArray(content)) return [];
  return content.map((block, index) => ({ type: 'content_block_start', index, content_block: block }));
}
