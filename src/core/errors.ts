// The error family. Every error the SDK throws is an AgentMessagingError.
// Guards check a brand as well as `instanceof`, so they hold across duplicate copies of the package.

import type { FieldIssue } from '../schemas/issues.js';

const brand = Symbol.for('agent-messaging.error');
const kindKey = Symbol.for('agent-messaging.error.kind');

/** The root of every error this SDK throws. */
export class AgentMessagingError extends Error {
  override name = 'AgentMessagingError';
  readonly [brand] = true;

  /** True for any error of this SDK, even one thrown by another copy of the package. */
  static is(value: unknown): value is AgentMessagingError {
    return (
      value instanceof AgentMessagingError || (typeof value === 'object' && value !== null && brand in value)
    );
  }
}

/**
 * Tags a class's prototype with its kind, so `is()` recognises instances made by another copy of the
 * package, subclasses included (a NotFoundError is an ApiError there too).
 * @internal
 */
export function markKind(target: { prototype: object }, kind: string): void {
  Object.defineProperty(target.prototype, kindKey, { value: kind });
}

/** True when `value` is an SDK error whose class, or one of its ancestors, was marked `kind`. @internal */
export function hasKind(value: unknown, kind: string): boolean {
  if (!AgentMessagingError.is(value)) return false;
  for (let proto: object | null = Object.getPrototypeOf(value); proto; proto = Object.getPrototypeOf(proto)) {
    if (Object.hasOwn(proto, kindKey) && (proto as Record<symbol, unknown>)[kindKey] === kind) return true;
  }
  return false;
}

/**
 * Bad input, found before anything was sent: names the offending field and the rule it broke.
 *
 * @example
 * catch (error) { if (ValidationError.is(error)) console.error(error.field, error.issues); }
 */
export class ValidationError extends AgentMessagingError {
  override name = 'ValidationError';
  /** The first offending field, as `user_ids[3]`, `idempotencyKey` or `baseUrl`. */
  readonly field: string;
  /** Every offending field with the rule it broke. */
  readonly issues: readonly FieldIssue[];

  static {
    markKind(ValidationError, 'ValidationError');
  }

  /** `context` says what was being checked, such as `groups.invite`. */
  constructor(issues: readonly FieldIssue[], context?: string) {
    const list = issues.map(({ field, message }) => `${field || 'body'}: ${message}`).join('; ');
    super(context ? `Invalid input to ${context}: ${list}` : `Invalid input: ${list}`);
    this.issues = issues;
    this.field = issues[0]?.field ?? '';
  }

  /** True for this error, even one thrown by another copy of the package. */
  static override is(value: unknown): value is ValidationError {
    return value instanceof ValidationError || hasKind(value, 'ValidationError');
  }
}

/** The request never got an answer: refused, reset, or broken before the response was complete. */
export class ConnectionError extends AgentMessagingError {
  override name = 'ConnectionError';

  static {
    markKind(ConnectionError, 'ConnectionError');
  }

  /** True for this error, even one thrown by another copy of the package. */
  static override is(value: unknown): value is ConnectionError {
    return value instanceof ConnectionError || hasKind(value, 'ConnectionError');
  }
}

/** An attempt took longer than its `timeoutMs` (after any retries), or a stream stayed silent too long. */
export class TimeoutError extends AgentMessagingError {
  override name = 'TimeoutError';

  static {
    markKind(TimeoutError, 'TimeoutError');
  }

  /** True for this error, even one thrown by another copy of the package. */
  static override is(value: unknown): value is TimeoutError {
    return value instanceof TimeoutError || hasKind(value, 'TimeoutError');
  }
}

/** The caller's `AbortSignal` ended the call; `cause` holds the signal's reason. */
export class RequestAbortedError extends AgentMessagingError {
  override name = 'RequestAbortedError';

  static {
    markKind(RequestAbortedError, 'RequestAbortedError');
  }

  /** True for this error, even one thrown by another copy of the package. */
  static override is(value: unknown): value is RequestAbortedError {
    return value instanceof RequestAbortedError || hasKind(value, 'RequestAbortedError');
  }
}

/** What is known about an answer that did not fit its schema. */
export interface InvalidResponseDetails extends ErrorOptions {
  /** HTTP status of the answer. */
  status?: number;
  /** `Request-Id` of the answer. */
  requestId?: string | undefined;
  /** The fields that did not fit, when the body was JSON. */
  issues?: readonly FieldIssue[];
}

/** The service answered something this SDK cannot read: not JSON, or not the shape of the wire schema. */
export class InvalidResponseError extends AgentMessagingError {
  override name = 'InvalidResponseError';
  /** HTTP status of the answer, when there was one. */
  readonly status: number | undefined;
  /** `Request-Id` of the answer, when there was one. */
  readonly requestId: string | undefined;
  /** The fields that did not fit; empty when the body was not JSON at all. */
  readonly issues: readonly FieldIssue[];

  static {
    markKind(InvalidResponseError, 'InvalidResponseError');
  }

  constructor(message: string, details: InvalidResponseDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.requestId = details.requestId;
    this.issues = details.issues ?? [];
  }

  /** True for this error, even one thrown by another copy of the package. */
  static override is(value: unknown): value is InvalidResponseError {
    return value instanceof InvalidResponseError || hasKind(value, 'InvalidResponseError');
  }
}
