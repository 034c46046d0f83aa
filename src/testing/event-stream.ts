// GET /_mock/events: the live feed as `text/event-stream`, from the moment of connection. Each
// event is `event: <type>` and `data: <json>`; an idle feed gets `: keep-alive` comments.
import type { MockEvent } from '../schemas/mock-events.js';
import { SseWriter } from './sse-writer.js';
import type { MockWorld } from './world.js';

/** One event as an SSE frame; its `id:` is the event's seq (compare with the snapshot's `event_seq`). */
export function sseFrame(event: MockEvent, seq: number): string {
  return `id: ${seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** A response that follows the live feed until the client goes away (or the server closes). */
export function liveFeedResponse(world: MockWorld, signal: AbortSignal | undefined): Response {
  let unsubscribe = () => {};
  const writer = new SseWriter(
    { keepAliveMs: world.options.keepAliveMs, signal, onStop: () => unsubscribe() },
    (feed) => {
      // Subscribed before the first byte, so nothing that happens after connection is missed.
      unsubscribe = world.events.subscribe((event, seq) => feed.write(sseFrame(event, seq)));
      feed.write(': connected\n\n');
    },
  );
  return new Response(writer.body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'transfer-encoding': 'chunked',
    },
  });
}
