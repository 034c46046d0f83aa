// The webhook side of the SDK: verification now, the bot runtime beside it.
export type { WebhookBody, WebhookHeaders } from './raw-input.js';
export { generateWebhookSecret, type SignedHeaders, signWebhook } from './signature.js';
export { WebhookVerificationError, type WebhookVerificationErrorCode } from './verification-error.js';
export { DEFAULT_TOLERANCE_SEC, type VerifyWebhookOptions, verifyWebhook } from './verify.js';
