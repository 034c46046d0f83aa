// The service said no: one class per status users branch on, built by `createApiError`.

import type { ErrorCode } from '../schemas/errors.js';
import { AgentMessagingError, hasKind, markKind } from './errors.js';

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
  override name = 'ApiError';
  /** HTTP status. */
  readonly status: number;
  /** The service's error code, such as `not_found`; undefined when the body was not its error shape. */
  readonly code: ErrorCode | undefined;
  /** The `Request-Id` of the answer. */
  readonly requestId: string | undefined;
  /** The answer's headers, names lower-cased. */
  readonly headers: Readonly<Record<string, string>>;

  static {
    markKind(ApiError, 'ApiError');
  }

  constructor(init: ApiErrorInit) {
    const code = init.code ? ` ${init.code}` : '';
    const request = init.requestId ? ` (request ${init.requestId})` : '';
    super(`${init.status}${code}: ${init.message}${request}`);
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.headers = init.headers ?? {};
  }

  /** True for any answer error, of any subclass, even one thrown by another copy of the package. */
  static override is(value: unknown): value is ApiError {
    return value instanceof ApiError || hasKind(value, 'ApiError');
  }
}

/** 400: the service refused the request's shape (the SDK checks most rules before sending). */
export class BadRequestError extends ApiError {
  override name = 'BadRequestError';
  static {
    markKind(BadRequestError, 'BadRequestError');
  }
  /** True for this error, even one thrown by another copy of the package. */
  static override is(value: unknown): value is BadRequestError {
    return value instanceof BadRequestError || hasKind(value, 'BadRequestError');
  }
}

/** 401: no credential, an unknown one, or the wrong kind for the endpoint. */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
  static {
    markKind(AuthenticationError, 'AuthenticationError');
  }
  /** True for this error, even one thrown by another copy of the package. */
  static override is(value: unknown): value is AuthenticationError {
    return value instanceof AuthenticationError || hasKind(value, 'AuthenticationError');
  }
}

/** 403: authenticated, but not allowed (an agent that is not active, someone else's message). */
export class PermissionDeniedError extends ApiError {
  override name = 'PermissionDeniedError';
  static {
    markKind(PermissionDeniedError, 'PermissionDeniedError');
  }
  /** True for this error, even one thrown by another copy of the package. */
  static override is(value: unknown): value is PermissionDeniedError {
    return value instanceof PermissionDeniedError || hasKind(value, 'PermissionDeniedError');
  }
}

/** 404: unknown id, or outside the caller's membership. */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
  static {
    markKind(NotFoundError, 'NotFoundError');
  }
  /** True for this error, even one thrown by another copy of the package. */
  static override is(value: unknown): value is NotFoundError {
    return value instanceof NotFoundError || hasKind(value, 'NotFoundError');
  }
}

/** 409: the resource's state forbids it (`handle_taken`, `unsend_window_elapsed`, ...). */
export class ConflictError extends ApiError {
  override name = 'ConflictError';
  static {
    markKind(ConflictError, 'ConflictError');
  }
  /** True for this error, even one thrown by another copy of the package. */
  static override is(value: unknown): value is ConflictError {
    return value instanceof ConflictError || hasKind(value, 'ConflictError');
  }
}

/** 410: gone for good (`invite_expired`, an expired upload handle). */
export class GoneError extends ApiError {
  override name = 'GoneError';
  static {
    markKind(GoneError, 'GoneError');
  }
  /** True for this error, even one thrown by another copy of the package. */
  static override is(value: unknown): value is GoneError {
    return value instanceof GoneError || hasKind(value, 'GoneError');
  }
}

/** 422: well-formed but refused (`ineligible_target`, `idempotency_key_reused`, ...). */
export class UnprocessableEntityError extends ApiError {
  override name = 'UnprocessableEntityError';
  static {
    markKind(UnprocessableEntityError, 'UnprocessableEntityError');
  }
  /** True for this error, even one thrown by another copy of the package. */
  static override is(value: unknown): value is UnprocessableEntityError {
    return value instanceof UnprocessableEntityError || hasKind(value, 'UnprocessableEntityError');
  }
}

/** 429: slow down; `retryAfter` says for how many seconds, when the service said. */
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
  /** Seconds to wait before trying again, from `Retry-After`. */
  readonly retryAfter: number | undefined;
  static {
    markKind(RateLimitError, 'RateLimitError');
  }
  constructor(init: ApiErrorInit) {
    super(init);
    this.retryAfter = init.retryAfter;
  }
  /** True for this error, even one thrown by another copy of the package. */
  static override is(value: unknown): value is RateLimitError {
    return value instanceof RateLimitError || hasKind(value, 'RateLimitError');
  }
}

/** 500 and above: the service failed; safe calls were already retried. */
export class InternalServerError extends ApiError {
  override name = 'InternalServerError';
  static {
    markKind(InternalServerError, 'InternalServerError');
  }
  /** True for this error, even one thrown by another copy of the package. */
  static override is(value: unknown): value is InternalServerError {
    return value instanceof InternalServerError || hasKind(value, 'InternalServerError');
  }
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

const classOf = (status: number) => byStatus[status] ?? (status >= 500 ? InternalServerError : ApiError);

/** The ApiError subclass for a status: NotFoundError for 404, InternalServerError for 5xx, ... */
export function createApiError(init: ApiErrorInit): ApiError {
  const ErrorClass = classOf(init.status);
  return new ErrorClass(init);
}

/** The name of the error a status becomes, for log lines. @internal */
export const apiErrorName = (status: number): string => classOf(status).name;
