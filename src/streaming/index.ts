// Streaming: SSE bodies as typed events, and replies that stream (PROTOCOL.md section 8).

export { DEFAULT_COALESCE, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_INTERRUPTED_NOTE } from './defaults.js';
export { MessageStream, type MessageStreamOptions } from './message-stream.js';
export { messageStreamOf, openMessageStream } from './open-message-stream.js';
export type {
  ReplyOptions,
  ReplyOutcome,
  ReplyResult,
  ReplyTransport,
  StreamBody,
  StreamOptions,
} from './options.js';
export { type PipeReplyOptions, pipeReply, type ReplySource, replySource } from './pipe-reply.js';
export { ReplyMismatchError } from './reply-mismatch-error.js';
export { startReply } from './reply-start.js';
export { ReplyWriter } from './reply-writer.js';
export { readStreamEvents, type SseReadOptions } from './sse-reader.js';
export { type ReplyLedger, storeLedger } from './store-ledger.js';
export { supportsStreamedBodies } from './streamed-bodies.js';
export {
  type StreamedBlock,
  type StreamedMessage,
  StreamedMessageBuilder,
  textOfBlocks,
} from './streamed-message.js';
export type { CoalesceOptions } from './write-buffer.js';
