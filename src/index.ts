/**
 * `agent-messaging`: the TypeScript SDK for the Agent Messaging Service.
 *
 * @example
 * import { AgentClient } from 'agent-messaging';
 * const client = new AgentClient({ apiKey: process.env.AMS_API_KEY!, baseUrl: 'https://ams.example' });
 * await client.messages.send('cnv_123', { text: 'Hello' });
 *
 * @packageDocumentation
 */

// Clients
export { AgentClient } from './client/agent-client.js';
export { type RegisterAgentOptions, registerAgent } from './client/register-agent.js';
export { UserClient } from './client/user-client.js';
// Errors
export {
  ApiError,
  type ApiErrorInit,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  GoneError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
} from './core/api-error.js';
export type { ApiPromise, WithResponse } from './core/api-promise.js';
export * from './core/errors.js';
export { idempotencyKeyFor } from './core/idempotency.js';
export type * from './core/options.js';
// LLM-native bots: model streams in, conversation history out
export type { HistoryOptions } from './llm/conversation-history.js';
export type { FileUrlResolver } from './llm/conversation-turns.js';
export type {
  AiSdkMessage,
  AiSdkPart,
  AnthropicMessage,
  ModelMessageFormat,
  ModelMessageFormats,
  OpenAIChatMessage,
} from './llm/model-formats.js';
export { type ModelMessagesOptions, toModelMessages } from './llm/model-messages.js';
export { type ModelSourceKind, ModelStreamError } from './llm/model-stream-error.js';
export type { ToolCallInfo } from './llm/stream-pieces.js';
export { type ModelStreamSource, type TextStreamOptions, toTextStream } from './llm/to-text-stream.js';
export type { Agents } from './resources/agents.js';
export type { Attachments, UploadData, UploadInput, UploadProgress } from './resources/attachments.js';
export type { Conversations, UserConversations } from './resources/conversations.js';
export type { Groups, Invites } from './resources/groups.js';
export type { Messages, UserMessages } from './resources/messages.js';
export type { SendContentInput, SendInput, SendTextInput } from './resources/send-input.js';
export type * from './schemas/index.js';
// The wire: one zod schema per shape, and the types derived from them.
export * as schemas from './schemas/index.js';
export type { FieldIssue } from './schemas/issues.js';
export type { StreamEvent } from './schemas/stream.js';
export type { WebhookEvent, WebhookEventType } from './schemas/webhooks.js';
// The bot store: dedupe, locks, queues, sessions and signals, in memory or shared
export * from './store/index.js';
// Streaming: SSE bodies as typed events, and replies that stream.
export type { MessageStream } from './streaming/message-stream.js';
export type {
  ReplyOptions,
  ReplyOutcome,
  ReplyResult,
  ReplyTransport,
  StreamBody,
  StreamOptions,
} from './streaming/options.js';
export type { PipeReplyOptions, ReplySource } from './streaming/pipe-reply.js';
export { ReplyMismatchError } from './streaming/reconcile.js';
export type { ReplyWriter } from './streaming/reply-writer.js';
export type { StreamedBlock, StreamedMessage } from './streaming/streamed-message.js';
export type { CoalesceOptions } from './streaming/write-buffer.js';
// Webhooks and bots
export * from './webhooks/index.js';
