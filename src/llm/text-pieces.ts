// The text of a model stream, piece by piece: the part of toTextStream that reads.
import type { ValidationError } from '../core/errors.js';
import { anthropicSnapshot, isMessageStream, type MessageStreamLike } from './message-stream-like.js';
import { type ModelSourceKind, ModelStreamError } from './model-stream-error.js';
import { decoderFor, describe } from './source-kind.js';
import { type Decoder, type ModelStopReason, type Piece, record } from './stream-pieces.js';
import { invalid, type TextStreamOptions } from './text-source.js';

/** The text of `iterable`, its tool calls to `onToolCall`, `truncatedNote` after a cut answer. @internal */
export async function* pieces(
  iterable: AsyncIterable<unknown> | Iterable<unknown>,
  onToolCall: TextStreamOptions['onToolCall'],
  truncatedNote: string,
): AsyncGenerator<string> {
  let kind: ModelSourceKind | undefined;
  let decode: Decoder | undefined;
  const out: Piece[] = [];
  const ending: Ending = { wroteText: false, cutShort: undefined };
  let index = 0;
  // An event-emitting stream (Anthropic's MessageStream, openai's runners) hands its iterator only
  // the events after the iterator is made, never settles one made after it failed, and ends it
  // quietly when it fails while no read is waiting; its `done()` settles with the failure.
  const emitter: MessageStreamLike | undefined = isMessageStream(iterable) ? iterable : undefined;
  let earlier: unknown[] = [];
  if (emitter) {
    // Its failure is read first, and what came before is in its snapshot, read in the same tick.
    if (emitter.errored) await emitter.done();
    const events = emitter[Symbol.asyncIterator]();
    earlier = anthropicSnapshot(emitter);
    iterable = { [Symbol.asyncIterator]: () => events };
  }
  try {
    // Given at once: the model may be slow to send its next event.
    for (const event of earlier) {
      if (decode === undefined) ({ kind, decode } = decoderFor(event, 0) ?? {});
      decode?.read(event, out);
    }
    yield* drain(out, onToolCall, ending);
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
      } else if (record(event) === undefined) {
        // A model's events are objects: a string among them is a mixed-up source, not text to drop.
        throw invalid(`yielded ${describe(event)} at index ${index} among ${kind} events`);
      }
      index += 1;
      decode?.read(event, out);
      yield* drain(out, onToolCall, ending);
    }
    yield* drain(out, onToolCall, ending);
    // The end is checked, not trusted: an emitter's iterator may have dropped its failure, and any
    // stream ends quietly on a connection closed early, without the event that closes an answer.
    await emitter?.done();
    decode?.end();
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
