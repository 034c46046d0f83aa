// toTextStream: any model stream a bot is likely to hold, as plain text deltas. Detected by shape,
// so the SDK depends on no model package at run time. The checks (text-source.ts) run when the call
// is made; the decoders (text-pieces.ts) read the stream. A reply (pipe-reply.ts) uses both the same way.
import { pieces } from './text-pieces.js';
import { type ModelStreamSource, type TextStreamOptions, textStreamOf } from './text-source.js';

export type { ModelStreamSource, TextStreamOptions } from './text-source.js';

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
  return textStreamOf(source, options, pieces);
}
