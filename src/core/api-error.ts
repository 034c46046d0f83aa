// The service said no: one class per status users branch on, built by `createApiError`.

import type { ErrorCode } from '../schemas/errors.js';
import { AgentMessagingError } from './errors.js';

/** Everything an ApiError is made from. */
export interface ApiErrorInit {
  /** HTTP status of the answer. */
  status: number;
  /** `error.code` of the body; undefined when the body was not the service's error shape. */
  code?: ErrorCode | undefined;
  /** `error.message` of the body, or a description of the status when there was none. */
  message: string;
  /** The `Request-Id` header, for support requests. */
  requestId?: string | undefined;
  /** The answer's headers, names lower-cased. */
  headers?: Readonly<Record<string, string>>;
  /** Seconds from `Retry-After`, when the service sent it. */
  retryAfter?: number | undefined;
}

/**
 * A non-2xx answer of the service. `code` is the service's error code (PROTOCOL.md section 2).
 *
 * @example
 * catch (error) { if (ApiError.is(error)) console.error(error.status, error.code, error.requestId); }
 */
export class ApiError extends AgentMessagingError {
  static override readonly kind: string = 'ApiError';
  /** HTTP status. */
  readonly status: number;
  /** The service's error code, such as `not_found`; undefined when the body was not its error shape. */
  readonly code: ErrorCode | undefined;
  /** The `Request-Id` of the answer. */
  readonly requestId: string | undefined;
  /** The answer's headers, names lower-cased. */
  readonly headers: Readonly<Record<string, string>>;
  /** Seconds to wait before trying again, from `Retry-After` (a 429, a 503), when the service said. */
  readonly retryAfter: number | undefined;

  constructor(init: ApiErrorInit) {
    const code = init.code ? ` ${init.code}` : '';
    const request = init.requestId ? ` (request ${init.requestId})` : '';
    super(`${init.status}${code}: ${init.message}${request}`);
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.headers = init.headers ?? {};
    this.retryAfter = init.retryAfter;
  }
}

/** 400: the service refused the request's shape (the SDK checks most rules before sending). */
export class BadRequestError extends ApiError {
  static override readonly kind: string = 'BadRequestError';
}

/** 401: no credential, an unknown one, or the wrong kind for the endpoint. */
export class AuthenticationError extends ApiError {
  static override readonly kind: string = 'AuthenticationError';
}

/** 403: authenticated, but not allowed (an agent that is not active, someone else's message). */
export class PermissionDeniedError extends ApiError {
  static override readonly kind: string = 'PermissionDeniedError';
}

/** 404: unknown id, or outside the caller's membership. */
export class NotFoundError extends ApiError {
  static override readonly kind: string = 'NotFoundError';
}

/** 409: the resource's state forbids it (`handle_taken`, `unsend_window_elapsed`, ...). */
export class ConflictError extends ApiError {
  static override readonly kind: string = 'ConflictError';
}

/** 410: gone for good (`invite_expired`, an expired upload handle). */
export class GoneError extends ApiError {
  static override readonly kind: string = 'GoneError';
}

/** 422: well-formed but refused (`ineligible_target`, `idempotency_key_reused`, ...). */
export class UnprocessableEntityError extends ApiError {
  static override readonly kind: string = 'UnprocessableEntityError';
}

/** 429: slow down; `retryAfter` says for how many seconds, when the service said. */
export class RateLimitError extends ApiError {
  static override readonly kind: string = 'RateLimitError';
}

/** 500 and above: the service failed; safe calls were already retried. */
export class InternalServerError extends ApiError {
  static override readonly kind: string = 'InternalServerError';
}

const byStatus: Record<number, new (init: ApiErrorInit) => ApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  410: GoneError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** The ApiError subclass for a status: NotFoundError for 404, InternalServerError for 5xx, ... */
export function createApiError(init: ApiErrorInit): ApiError {
  const ErrorClass = byStatus[init.status] ?? (init.status >= 500 ? InternalServerError : ApiError);
  return new ErrorClass(init);
}
