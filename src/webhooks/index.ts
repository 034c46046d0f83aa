// The webhook side of the SDK: verification, and the bot runtime built on it.

export { createBot } from './bot.js';
export type {
  Bot,
  BotAction,
  BotCloseOptions,
  BotErrorInfo,
  BotFileReplyResult,
  BotOptions,
  BotReplyOptions,
  BotReplyResult,
  ContextFor,
  EventContext,
  Handler,
  MessageContext,
} from './bot-types.js';
export type { FileReplyOptions, QuickReply, StopTyping } from './context-reply.js';
export type { DeliveryAnswer, DeliveryOptions, WaitUntil } from './delivery.js';
export { MessageGivenUpError } from './given-up-error.js';
export type {
  AnswerCheck,
  AnswerSchema,
  AskOptions,
  QuestionDefinition,
  QuestionState,
  QuestionTimeoutContext,
} from './questions.js';
export type { Middleware } from './router.js';
export { type BotSession, SessionConflictError, type SessionOptions } from './session.js';
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookBody,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationErrorCode,
} from './verify.js';
