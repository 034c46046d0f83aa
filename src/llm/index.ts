// LLM-native bots: model streams in (toTextStream), conversation history out (toModelMessages).
export { type ModelSourceKind, ModelStreamError } from './model-stream-error.js';
export type { ToolCallInfo } from './stream-pieces.js';
export { type ModelStreamSource, type TextStreamOptions, toTextStream } from './to-text-stream.js';
