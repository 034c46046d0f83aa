// The parts of @anthropic-ai/sdk's MessageStream that toTextStream relies on, seen by shape.
import { record } from './stream-pieces.js';

/** What a MessageStream shows: an event emitter whose async iterator yields raw events. @internal */
export interface MessageStreamLike extends AsyncIterable<unknown> {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  done(): Promise<void>;
  readonly ended: boolean;
  readonly errored: boolean;
  readonly currentMessage?: unknown;
}

/** True for an Anthropic MessageStream (or anything built like one). @internal */
export function isMessageStream(value: object): value is MessageStreamLike {
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
 * @internal
 */
export function anthropicSnapshot(stream: MessageStreamLike): unknown[] {
  const content = record(stream.currentMessage)?.content;
  if (!Array.isArray(content)) return [];
  return content.map((block, index) => ({ type: 'content_block_start', index, content_block: block }));
}
