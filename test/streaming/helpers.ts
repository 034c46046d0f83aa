import type { StreamEvent } from 'agent-messaging';
// Private: a MessageStream over a body made here (a user gets one from messages.stream).
import { MessageStream } from '../../src/streaming/message-stream.js';

/** A body that delivers the given chunks, then ends; `cancelled` records a cancel from the reader. */
export function bodyOf(chunks: readonly Uint8Array[]) {
  const state = { cancelled: false, reason: undefined as unknown };
  let index = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[index++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk);
    },
    cancel(reason) {
      state.cancelled = true;
      state.reason = reason;
    },
  });
  return { body, state };
}

/** Splits bytes at the given offsets (any order, repeats allowed). */
export function splitAt(bytes: Uint8Array, offsets: readonly number[]): Uint8Array[] {
  const cuts = [...new Set(offsets)].filter((at) => at > 0 && at < bytes.length).sort((a, b) => a - b);
  const bounds = [0, ...cuts, bytes.length];
  return bounds.slice(1).map((end, i) => bytes.subarray(bounds[i], end));
}

/** Every event of a MessageStream over the chunks. */
export async function eventsOf(chunks: readonly Uint8Array[]): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of new MessageStream(bodyOf(chunks).body)) events.push(event);
  return events;
}

/** A body whose chunks the test pushes by hand. */
export function manualBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const state = { cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel() {
      state.cancelled = true;
    },
  });
  const encoder = new TextEncoder();
  return {
    body,
    state,
    push: (text: string) => controller.enqueue(encoder.encode(text)),
    end: () => controller.close(),
    fail: (error: unknown) => controller.error(error),
  };
}

/** One SSE event in the wire format. */
export function sse(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ schema: 'svc.event.v1', eventId: `evt_${String(data.seq)}`, conversationId: 'cnv_t', type, ...data })}\n\n`;
}
