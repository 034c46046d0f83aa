// Streaming: SSE bodies as typed events, and replies that stream (PROTOCOL.md section 8).
export {
  MessageStream,
  type MessageStreamOptions,
  messageStreamOf,
  openMessageStream,
} from './message-stream.js';
export { supportsStreamedBodies } from './ndjson-body.js';
export type { StreamBody } from './options.js';
export {
  DEFAULT_INTERRUPTED_NOTE,
  type ReplyOptions,
  type ReplyOutcome,
  type ReplyResult,
  type ReplyTransport,
  type StreamOptions,
} from './options.js';
export { type PipeReplyOptions, pipeReply, type ReplySource, replySource } from './pipe-reply.js';
export { ReplyMismatchError } from './reconcile.js';
export { type ReplyLedger, storeLedger } from './reply-lease.js';
export { startReply } from './reply-start.js';
export { ReplyWriter } from './reply-writer.js';
export { DEFAULT_IDLE_TIMEOUT_MS, readStreamEvents, type SseReadOptions } from './sse-reader.js';
export {
  type StreamedBlock,
  type StreamedMessage,
  StreamedMessageBuilder,
  textOfBlocks,
} from './streamed-message.js';
export { type CoalesceOptions, DEFAULT_COALESCE } from './write-buffer.js';
