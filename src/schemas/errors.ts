import * as z from 'zod/mini';
import { openEnum, type Wire } from './common.js';

/** Error codes of PROTOCOL.md section 2; any other code is passed through. */
export const ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'handle_taken',
  'message_not_streaming',
  'unsend_window_elapsed',
  'idempotency_in_progress',
  'invite_expired',
  'payload_too_large',
  'streaming_unsupported',
  'idempotency_key_reused',
  'ineligible_target',
  'webhook_verification_failed',
  'rate_limited',
  'internal_error',
  'unavailable',
] as const;
/** An error code, known or not. */
export const ErrorCode = openEnum(ERROR_CODES);
/** An error code, known or not. */
export type ErrorCode = Wire<typeof ErrorCode>;

/** `{ error: { code, message } }`, the body of every failing call. */
export const ErrorBody = z.looseObject({
  error: z.looseObject({ code: ErrorCode, message: z.string() }),
});
/** `{ error: { code, message } }`, the body of every failing call. */
export type ErrorBody = Wire<typeof ErrorBody>;
