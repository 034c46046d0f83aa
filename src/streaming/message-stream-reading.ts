// What a MessageStream runs once it is read: the SSE reader, the iterator that hands out its events
// and the builder of the message. message-stream.ts loads this module on use, so a bundler that
// splits by module (esbuild) keeps it out of the chunk `import { AgentClient }` loads up front.
import type { StreamEvent } from '../schemas/stream.js';
import { EventIterator } from './event-iterator.js';
import { readStreamEventBatches, type SseReadOptions } from './sse-reader.js';
import { StreamedMessageBuilder } from './streamed-message.js';

export { textOfBlocks } from './streamed-message.js';

/** A started read of a stream: its events, and the message they build. @internal */
export interface MessageStreamReading {
  events: AsyncIterator<StreamEvent>;
  builder: StreamedMessageBuilder;
}

/**
 * Starts reading `body`: events are applied to the builder as they are handed out; `onDone` runs once
 * when the iteration ends, `unread` saying the body was never taken by the reader.
 * @internal
 */
export function readMessageStream(
  body: ReadableStream<Uint8Array>,
  options: SseReadOptions,
  onDone: (unread: boolean) => void,
): MessageStreamReading {
  const builder = new StreamedMessageBuilder();
  return { events: new EventIterator(readStreamEventBatches(body, options), builder, onDone), builder };
}
