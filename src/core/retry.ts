// When a failed attempt is tried again, and after how long (README "Retries").

import { ApiError } from './api-error.js';
import { ConnectionError, RequestAbortedError, TimeoutError } from './errors.js';

/** Longest `Retry-After` the SDK sleeps on; beyond it the error is thrown at once. */
export const MAX_RETRY_AFTER_SECONDS = 60;
const BASE_DELAY_MS = 500;
const MAX_BACKOFF_MS = 8_000;
const IN_PROGRESS_MIN_DELAY_MS = 1_000;
const retryStatuses = new Set([408, 429, 500, 501, 502, 503, 504]);

/** Seconds of a `Retry-After` header (delta seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value == null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

/** Whether the failure is one a repeat may cure: a lost connection, a timeout, or a transient status. */
export function isTransient(error: unknown): boolean {
  if (ApiError.is(error)) {
    return (
      retryStatuses.has(error.status) || (error.status === 409 && error.code === 'idempotency_in_progress')
    );
  }
  return ConnectionError.is(error) || TimeoutError.is(error);
}

/**
 * Milliseconds to wait before retry number `retry` (1-based): the service's `Retry-After` when it
 * sent one, otherwise exponential backoff with full jitter. Undefined means: do not retry, throw now
 * (a `Retry-After` longer than a minute is not slept on).
 */
export function retryDelayMs(error: unknown, retry: number): number | undefined {
  if (ApiError.is(error)) {
    const seconds = parseRetryAfter(error.headers['retry-after']);
    if (seconds !== undefined)
      return seconds > MAX_RETRY_AFTER_SECONDS ? undefined : Math.ceil(seconds * 1000);
  }
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_DELAY_MS * 2 ** (retry - 1));
  const jittered = Math.round(Math.random() * ceiling);
  // The first attempt is still being processed: a quick repeat would only meet the same 409.
  if (ApiError.is(error) && error.status === 409) return Math.max(IN_PROGRESS_MIN_DELAY_MS, jittered);
  return jittered;
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
