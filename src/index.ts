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
export { ApiPromise, type WithResponse } from './core/api-promise.js';
export {
  AgentMessagingError,
  ConnectionError,
  InvalidResponseError,
  RequestAbortedError,
  TimeoutError,
  ValidationError,
} from './core/errors.js';
export { idempotencyKeyFor } from './core/idempotency.js';
export {
  type AgentClientOptions,
  type ConnectionOptions,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type LogFields,
  type Logger,
  type RequestOptions,
  type UserClientOptions,
} from './core/options.js';
// LLM-native bots: model streams in, conversation history out
export {
  type AiSdkMessage,
  type AiSdkPart,
  type AnthropicMessage,
  DEFAULT_HISTORY_LIMIT,
  type FileUrlResolver,
  type HistoryOptions,
  type ModelMessageFormat,
  type ModelMessageFormats,
  type ModelMessagesOptions,
  type ModelSourceKind,
  type ModelStopReason,
  ModelStreamError,
  type ModelStreamSource,
  type OpenAIChatMessage,
  type TextStreamOptions,
  type ToolCallInfo,
  type TurnFile,
  toModelMessages,
  toTextStream,
} from './llm/index.js';
export type { UploadData, UploadInput, UploadProgress } from './resources/attachments.js';
export type { SendBody, SendContentInput, SendInput, SendTextInput } from './resources/send-input.js';
export type {
  AcceptInviteResponse,
  Action,
  Agent,
  AgentConversation,
  AppendRequest,
  AppendResponse,
  Attachment,
  CompleteRequest,
  CompleteResponse,
  Conversation,
  CreateAttachmentRequest,
  CreateDirectRequest,
  CreateDirectResponse,
  CreateInviteRequest,
  CreateInviteResponse,
  ErrorBody,
  ErrorCode,
  GroupInvite,
  InviteCompletedEvent,
  InviteExpiredEvent,
  ListMessagesQuery,
  ListMessagesResponse,
  Message,
  MessageCompletedEvent,
  MessagePart,
  MessagePatchEvent,
  MessageReceivedEvent,
  MessageStartedEvent,
  Participant,
  ReactionRequest,
  ReactionResponse,
  ReadRequest,
  Receipt,
  ReceiptRequest,
  RegisterAgentRequest,
  RegisterAgentResponse,
  ResponseBlock,
  RetrieveConversationResponse,
  SendBlock,
  SendMessageRequest,
  SendMessageResponse,
  SetWebhookRequest,
  SetWebhookResponse,
  StreamEvent,
  TextPatch,
  TypingRequest,
  TypingResponse,
  UnsendResponse,
  WebhookEvent,
  WebhookEventType,
  WebhookTestEvent,
} from './schemas/index.js';
// The wire: one zod schema per shape, and the types derived from them.
export * as schemas from './schemas/index.js';
export type { AdmitRequest, AdmitResult, SettleRequest, SettleResult } from './store/index.js';
// The bot store: dedupe, locks, queues, sessions and signals, in memory or shared
export {
  type BotStore,
  createMemoryStore,
  type MemoryStoreOptions,
  type StoreLock,
  StoreUnavailableError,
  type Unsubscribe,
} from './store/index.js';
// Streaming: SSE bodies as typed events, and replies that stream.
export { DEFAULT_COALESCE, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_INTERRUPTED_NOTE } from './streaming/defaults.js';
export type {
  CoalesceOptions,
  MessageStreamOptions,
  ReplyLedger,
  ReplyOptions,
  ReplyOutcome,
  ReplyResult,
  ReplySource,
  ReplyTransport,
  StreamBody,
  StreamedBlock,
  StreamedMessage,
  StreamOptions,
} from './streaming/index.js';
export { MessageStream } from './streaming/message-stream.js';
export { ReplyMismatchError } from './streaming/reply-mismatch-error.js';
export { ReplyWriter } from './streaming/reply-writer.js';
export { storeLedger } from './streaming/store-ledger.js';
export { supportsStreamedBodies } from './streaming/streamed-bodies.js';
// Webhooks and bots
export {
  type Bot,
  type BotAction,
  type BotErrorInfo,
  type BotFileReplyResult,
  type BotOptions,
  type BotReplyOptions,
  type BotReplyResult,
  type BotSession,
  type ClaimResult,
  type ContextFor,
  createBot,
  createMemoryDedupeStore,
  DEDUPE_RETENTION_MS,
  DEFAULT_ACK_TIMEOUT_MS,
  DEFAULT_TOLERANCE_SEC,
  type DedupeStore,
  type DeliveryAnswer,
  type DeliveryOptions,
  type EventContext,
  type FileReplyOptions,
  type Handler,
  type MemoryDedupeStoreOptions,
  type MessageContext,
  type Middleware,
  type QuickReply,
  SessionConflictError,
  type SessionOptions,
  type StopTyping,
  type VerifyWebhookOptions,
  verifyWebhook,
  type WaitUntil,
  type WebhookBody,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationErrorCode,
} from './webhooks/index.js';
