// The one retry policy (README "Retries"): which failures a repeat may cure, and after how long.
// The transport hands it to ky as `retry`; streaming asks the same questions of its own attempts.

import type { RetryOptions } from 'ky';
import { ApiError } from './api-error.js';
import { ConnectionError, RequestAbortedError, TimeoutError } from './errors.js';

/** Longest `Retry-After` the SDK sleeps on; beyond it the error is thrown at once. */
export const MAX_RETRY_AFTER_SECONDS = 60;
const BASE_DELAY_MS = 500;
const MAX_BACKOFF_MS = 8_000;
const IN_PROGRESS_MIN_DELAY_MS = 1_000;
/** Statuses a repeat may cure; a 409 only with `idempotency_in_progress`. */
const RETRY_STATUSES = [408, 409, 429, 500, 501, 502, 503, 504];

/** Seconds of a `Retry-After` header (delta seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  const trimmed = value?.trim();
  if (!trimmed) return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

/** A status (and code) a repeat may cure. */
export const isRetryStatus = (status: number, code: string | undefined): boolean =>
  RETRY_STATUSES.includes(status) && (status !== 409 || code === 'idempotency_in_progress');

/** Whether the failure is one a repeat may cure: a lost connection, a timeout, or a transient status. */
export function isTransient(error: unknown): boolean {
  if (ApiError.is(error)) return isRetryStatus(error.status, error.code);
  return ConnectionError.is(error) || TimeoutError.is(error);
}

/** True when the service asked for a pause longer than the SDK sleeps on (a RateLimitError then). */
export const retryAfterTooLong = (seconds: number | undefined): boolean =>
  seconds !== undefined && seconds > MAX_RETRY_AFTER_SECONDS;

/**
 * Milliseconds to wait before retry number `retry` (1-based): the service's `Retry-After` when it
 * sent one, otherwise exponential backoff with full jitter. Undefined means: do not retry, throw now
 * (a `Retry-After` longer than a minute is not slept on).
 */
export function retryDelayMs(error: unknown, retry: number): number | undefined {
  const seconds = ApiError.is(error) ? error.retryAfter : undefined;
  if (seconds !== undefined) return retryAfterTooLong(seconds) ? undefined : Math.ceil(seconds * 1000);
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_DELAY_MS * 2 ** (retry - 1));
  const jittered = Math.round(Math.random() * ceiling);
  // The first attempt is still being processed: a quick repeat would only meet the same 409.
  if (ApiError.is(error) && error.status === 409) return Math.max(IN_PROGRESS_MIN_DELAY_MS, jittered);
  return jittered;
}

/** Every method the service uses: the endpoint's retry class already decided whether a call repeats. */
const ALL_METHODS = ['get', 'put', 'delete', 'post', 'patch'];

/**
 * ky's `retry` for one call: ky counts the attempts and sleeps (abortably, on the caller's signal).
 * `shouldRetry` applies this policy to the failure as the SDK error it will become, including the
 * service's `Retry-After` (retryDelayMs), and announces the delay (`onRetry`) before ky sleeps it.
 * Only the four keys ky needs then: it normalizes (copies, filters, lower-cases) this object on every
 * call and every attempt. A call that may not repeat gets `0`: ky then also skips cloning its request.
 * @internal
 */
export function kyRetry(
  limit: number,
  toError: (error: unknown) => unknown,
  onRetry: (failure: unknown, attempt: number, delayMs: number) => void,
): RetryOptions | 0 {
  if (limit === 0) return 0;
  let delayMs = 0;
  return {
    limit,
    methods: ALL_METHODS,
    delay: () => delayMs,
    shouldRetry: ({ error, retryCount }) => {
      const failure = toError(error);
      const delay = isTransient(failure) ? retryDelayMs(failure, retryCount) : undefined;
      if (delay === undefined) return false;
      delayMs = delay;
      onRetry(failure, retryCount + 1, delay);
      // Always a boolean: ky's own checks (status lists, its reading of Retry-After) are never consulted.
      return true;
    },
  };
}

/** Waits `ms`, or rejects with RequestAbortedError as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortedError(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The error for a call its caller aborted. */
export function abortedError(signal: AbortSignal): RequestAbortedError {
  return new RequestAbortedError('The request was aborted by its signal.', { cause: signal.reason });
}
