// LLM-native bots: model streams in (toTextStream), conversation history out (toModelMessages).

export {
  conversationHistory,
  DEFAULT_HISTORY_LIMIT,
  type HistoryAnchor,
  type HistoryOptions,
} from './conversation-history.js';
export type { FileUrlResolver, TurnFile } from './conversation-turns.js';
export type {
  AiSdkMessage,
  AiSdkPart,
  AnthropicMessage,
  ModelMessageFormat,
  ModelMessageFormats,
  OpenAIChatMessage,
} from './model-formats.js';
export { type ModelMessagesOptions, toModelMessages } from './model-messages.js';
export { type ModelSourceKind, ModelStreamError } from './model-stream-error.js';
export type { ModelStopReason, ToolCallInfo } from './stream-pieces.js';
export { type ModelStreamSource, type TextStreamOptions, toTextStream } from './to-text-stream.js';
