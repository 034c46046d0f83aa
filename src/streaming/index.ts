// Streaming: SSE bodies as typed events, and replies that stream (PROTOCOL.md section 8).
export { MessageStream, type MessageStreamOptions } from './message-stream.js';
export { supportsStreamedBodies } from './ndjson-body.js';
export { messageStreamOf, openMessageStream } from './open-stream.js';
export type { ReplyOptions, ReplyResult, ReplyTransport, StreamOptions } from './options.js';
export { type PipeReplyOptions, pipeReply } from './pipe-reply.js';
export { startReply } from './reply-start.js';
export { ReplyWriter } from './reply-writer.js';
export type { StreamBody } from './send-shape.js';
export { DEFAULT_IDLE_TIMEOUT_MS, readStreamEvents, type SseReadOptions } from './sse-reader.js';
export {
  type StreamedBlock,
  type StreamedMessage,
  StreamedMessageBuilder,
  textOfBlocks,
} from './streamed-message.js';
export { type CoalesceOptions, DEFAULT_COALESCE } from './write-buffer.js';
