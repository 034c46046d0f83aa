// GET /_mock/events: the live feed as `text/event-stream`, from the moment of connection. Each
// event is `event: <type>` and `data: <json>`; an idle feed gets `: keep-alive` comments.
import type { MockEvent } from '../schemas/mock-events.js';
import type { MockWorld } from './world.js';

const encoder = new TextEncoder();

/** One event as an SSE frame; its `id:` is the event's seq (compare with the snapshot's `event_seq`). */
export function sseFrame(event: MockEvent, seq: number): string {
  return `id: ${seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** A response that follows the live feed until the client goes away (or the server closes). */
export function liveFeedResponse(world: MockWorld, signal: AbortSignal): Response {
  let unsubscribe = () => {};
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    unsubscribe();
    clearInterval(keepAlive);
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          // The stream was closed under us: nothing more to send.
          stop();
        }
      };
      // Subscribed before the first byte, so nothing that happens after connection is missed.
      unsubscribe = world.events.subscribe((event, seq) => send(sseFrame(event, seq)));
      send(': connected\n\n');
      keepAlive = setInterval(() => send(': keep-alive\n\n'), world.options.keepAliveMs);
      keepAlive.unref?.();
      signal.addEventListener(
        'abort',
        () => {
          stop();
          try {
            controller.close();
          } catch {
            // Already closed.
          }
        },
        { once: true },
      );
    },
    cancel: stop,
  });
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'transfer-encoding': 'chunked',
    },
  });
}
