// The error family. Every error the SDK throws is an AgentMessagingError.
// Guards check a brand as well as `instanceof`, so they hold across duplicate copies of the package.

import type { FieldIssue } from '../schemas/issues.js';

const brand = Symbol.for('agent-messaging.error');

type ErrorClass<T> = (abstract new (...args: never[]) => T) & { kind: string };

/**
 * The root of every error this SDK throws. Each class names its `kind` once; `is()` is inherited.
 *
 * @example
 * catch (error) { if (NotFoundError.is(error)) return null; }
 */
export class AgentMessagingError extends Error {
  /** The class's name, also where `instanceof` fails: in an error thrown by another copy of the package. */
  static readonly kind: string = 'AgentMessagingError';
  readonly [brand] = true;

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = (new.target as unknown as { kind: string }).kind;
  }

  /**
   * True for an error of this class or a subclass, even one thrown by another copy of the package
   * (a duplicate install, a second bundle): it checks the SDK's brand and the kinds up the chain.
   */
  static is<T extends AgentMessagingError>(this: ErrorClass<T>, value: unknown): value is T {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class `is` was called on (NotFoundError.is).
    return value instanceof this || hasKind(value, this.kind);
  }
}

/** True when `value` is an SDK error whose class, or one of its ancestors, is of `kind`. */
function hasKind(value: unknown, kind: string): boolean {
  if (typeof value !== 'object' || value === null || !(brand in value)) return false;
  for (let proto: object | null = Object.getPrototypeOf(value); proto; proto = Object.getPrototypeOf(proto)) {
    const owner: unknown = Object.hasOwn(proto, 'constructor')
      ? Reflect.get(proto, 'constructor')
      : undefined;
    if (typeof owner === 'function' && Object.hasOwn(owner, 'kind') && Reflect.get(owner, 'kind') === kind) {
      return true;
    }
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
  static override readonly kind: string = 'ValidationError';
  /** The first offending field, as `user_ids[3]`, `idempotencyKey` or `baseUrl`. */
  readonly field: string;
  /** Every offending field with the rule it broke. */
  readonly issues: readonly FieldIssue[];

  /** `context` says what was being checked, such as `groups.invite`. */
  constructor(issues: readonly FieldIssue[], context?: string) {
    const list = issues.map(({ field, message }) => `${field || 'body'}: ${message}`).join('; ');
    super(context ? `Invalid input to ${context}: ${list}` : `Invalid input: ${list}`);
    this.issues = issues;
    this.field = issues[0]?.field ?? '';
  }
}

/** The request never got an answer: refused, reset, or broken before the response was complete. */
export class ConnectionError extends AgentMessagingError {
  static override readonly kind: string = 'ConnectionError';
}

/** An attempt took longer than its `timeoutMs` (after any retries), or a stream stayed silent too long. */
export class TimeoutError extends AgentMessagingError {
  static override readonly kind: string = 'TimeoutError';
}

/** The caller's `AbortSignal` ended the call; `cause` holds the signal's reason. */
export class RequestAbortedError extends AgentMessagingError {
  static override readonly kind: string = 'RequestAbortedError';
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
  static override readonly kind: string = 'InvalidResponseError';
  /** HTTP status of the answer, when there was one. */
  readonly status: number | undefined;
  /** `Request-Id` of the answer, when there was one. */
  readonly requestId: string | undefined;
  /** The fields that did not fit; empty when the body was not JSON at all. */
  readonly issues: readonly FieldIssue[];

  constructor(message: string, details: InvalidResponseDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.requestId = details.requestId;
    this.issues = details.issues ?? [];
  }
}
