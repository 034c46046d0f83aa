import { AgentMessagingError } from '../core/errors.js';

/** Why a webhook delivery was refused; one string per failure, stable across versions. */
export type WebhookVerificationErrorCode =
  /** `webhook-id`, `webhook-timestamp` or `webhook-signature` is absent or empty. */
  | 'missing_headers'
  /** `webhook-timestamp` is not a whole number of Unix seconds. */
  | 'invalid_timestamp'
  /** `webhook-timestamp` is further in the past than the tolerance. */
  | 'timestamp_too_old'
  /** `webhook-timestamp` is further in the future than the tolerance (milliseconds land here). */
  | 'timestamp_too_new'
  /** No `v1,` signature in `webhook-signature` matches any of the secrets. */
  | 'no_matching_signature'
  /** The signed body is not UTF-8 JSON. */
  | 'invalid_json'
  /** The body was handed over as a parsed object instead of the raw bytes that were signed. */
  | 'body_already_parsed'
  /** The body is neither a string nor bytes. */
  | 'invalid_body'
  /** A secret is not in the `whsec_<base64>` format or its key is under 24 bytes, or the list is empty. */
  | 'invalid_secret'
  /** The JSON is signed but is not a webhook event of the shape PROTOCOL.md section 6 fixes. */
  | 'invalid_event'
  /** An option of the verifier itself is wrong, such as a negative `toleranceSec`. */
  | 'invalid_options';

/**
 * A webhook delivery that must not be trusted. Never carries the secret or the signature.
 *
 * @example
 * try { await verifyWebhook(body, headers, { secret }); }
 * catch (error) { if (WebhookVerificationError.is(error)) console.warn(error.code); }
 */
export class WebhookVerificationError extends AgentMessagingError {
  static override readonly kind: string = 'WebhookVerificationError';
  /** Which check failed. */
  readonly code: WebhookVerificationErrorCode;

  constructor(code: WebhookVerificationErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
