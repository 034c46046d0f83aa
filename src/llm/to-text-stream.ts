// toTextStream: any model stream a bot is likely to hold, as plain text deltas. Detected by shape,
// so the SDK depends on no model package at run time. The checks (text-source.ts) run when the call
// is made; the decoders (text-pieces.ts) load with the first piece read: the main entry exports
// toTextStream, and a bundler that splits by module (esbuild) would bring every model's decoder up
// front with it. A reply (pipe-reply.ts) uses the checks and the decoders directly.
import { ConnectionError } from '../core/errors.js';
import { CONTEXT, type ModelStreamSource, type TextStreamOptions, textStreamOf } from './text-source.js';

export type { ModelStreamSource, TextStreamOptions } from './text-source.js';

// The decoders once loaded: a stream read after that has no extra step per piece.
let textPieces: typeof import('./text-pieces.js') | undefined;

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
  return textStreamOf(source, options, textPieces?.pieces ?? loadedPieces);
}

// The decoders are loaded by the first `next()`; a failed load is a ConnectionError, and not kept.
async function* loadedPieces(
  events: AsyncIterable<unknown> | Iterable<unknown>,
  onToolCall: TextStreamOptions['onToolCall'],
  truncatedNote: string,
): AsyncGenerator<string> {
  // They come with the reply module (no chunk of their own for a bundler to split apart).
  // Not load-on-use.ts: this module would then share it with the client (see message-stream.ts).
  const loaded = await import('../streaming/pipe-reply.js').catch((cause: unknown) => {
    const message = `${CONTEXT}: the SDK's model stream decoders could not be loaded (${String(cause)}).`;
    throw new ConnectionError(message, { cause });
  });
  textPieces ??= loaded.textPieces;
  yield* textPieces.pieces(events, onToolCall, truncatedNote);
}
