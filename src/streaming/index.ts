// Streaming: SSE bodies as typed events, and replies that stream (PROTOCOL.md section 8).
export { MessageStream, type MessageStreamOptions } from './message-stream.js';
export { DEFAULT_IDLE_TIMEOUT_MS, readStreamEvents, type SseReadOptions } from './sse-reader.js';
export {
  type StreamedBlock,
  type StreamedMessage,
  StreamedMessageBuilder,
  textOfBlocks,
} from './streamed-message.js';
