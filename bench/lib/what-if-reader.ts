// A what-if, not SDK code: the SDK's stream reader with the two changes BENCHMARKS.md proposes,
// measured beside the real one so the proposal carries numbers. (1) Events are collected per chunk
// and yielded from a single async generator (the SDK stacks two: readStreamEvents inside
// MessageStream). (2) `message.patch`, nearly every event, is checked by hand; anything else, or a
// patch that fails the check, goes through the same zod schema as today, so errors do not change.
import { createParser } from 'eventsource-parser';
import { parseStreamEvent, type StreamEvent } from '../../src/schemas/stream.js';
import { StreamedMessageBuilder } from '../../src/streaming/streamed-message.js';

const isString = (value: unknown): value is string => typeof value === 'string';

/** The shape zod would accept for a `message.patch`, checked without zod. */
function isPatchEvent(data: unknown): data is StreamEvent {
  if (typeof data !== 'object' || data === null) return false;
  const event = data as Record<string, unknown>;
  const patch = event.patch as Record<string, unknown> | null | undefined;
  return (
    event.type === 'message.patch' &&
    isString(event.schema) &&
    isString(event.eventId) &&
    isString(event.conversationId) &&
    Number.isSafeInteger(event.seq) &&
    isString(event.messageId) &&
    typeof patch === 'object' &&
    patch !== null &&
    isString(patch.op) &&
    isString(patch.blockId) &&
    isString(patch.path) &&
    isString(patch.value)
  );
}

/** Reads an SSE body into stream events, applying each to a message builder, one generator deep. */
export async function* whatIfEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const builder = new StreamedMessageBuilder();
  let batch: StreamEvent[] = [];
  const parser = createParser({
    onEvent: (message) => {
      const data: unknown = JSON.parse(message.data);
      if (isPatchEvent(data)) batch.push(data);
      else {
        const parsed = parseStreamEvent(data);
        if (!parsed.success) throw new Error(`malformed ${message.event} event`);
        batch.push(parsed.data);
      }
    },
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }));
    const ready = batch;
    batch = [];
    for (const event of ready) {
      builder.apply(event);
      yield event;
    }
    if (done) return;
  }
}
