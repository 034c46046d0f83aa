// An answer's body read inside ky's attempt (an afterResponse hook): the per-attempt timeout then covers
// the body as well as the headers, so a body that stalls after a 2xx is retried under the one retry
// policy (retry.ts) like an attempt that never answered; and error bodies are read under the client's
// maxResponseBytes instead of ky's own fixed 10 MiB.

import ky, { type AfterResponseHook } from 'ky';
import { AgentMessagingError, ConnectionError, TimeoutError } from './errors.js';
import { readCapped } from './response.js';
import { retryDelayMs } from './retry.js';

/** What one call's hook needs to know. @internal */
export interface AttemptBody {
  /** Read 2xx bodies too (JSON calls); raw and upload calls hand a 2xx answer over unread. */
  readsAnswer: boolean;
  maxBytes: number;
  /** The attempt's budget, headers and body together. */
  timeoutMs: number;
  operation: string;
  /** Retries the call may still make in all (its retry class and maxRetries). */
  retries: number;
  /** `performance.now()` when the current attempt was sent. */
  startedAt: () => number;
  /** True once the caller's signal aborted: its abort is never retried. */
  aborted: () => boolean;
  /** Announces a retry, as the policy's `onRetry` does: the failure, the next attempt's number, the pause. */
  onRetry: (failure: unknown, attempt: number, delayMs: number) => void;
  /**
   * Takes a 2xx body read here; ky then hands over its own answer (read through the clone it gave this
   * hook) instead of a rebuilt copy: no second Response, no second read, no cancel of the first.
   */
  onAnswer?: (text: string) => void;
}

/**
 * What a failed 2xx body read means for the retry policy: a timeout of the attempt, or a connection
 * cut mid-body; undefined when a repeat cannot cure it (over the cap, the caller's abort).
 */
function bodyFailure(error: unknown, plan: AttemptBody): AgentMessagingError | undefined {
  if (TimeoutError.is(error)) {
    return new TimeoutError(`${plan.operation}: no answer within ${plan.timeoutMs} ms (timeoutMs).`);
  }
  if (AgentMessagingError.is(error) || plan.aborted()) return undefined;
  return new ConnectionError(`${plan.operation}: the connection failed while the answer was read.`);
}

/** Statuses whose answer may not carry a body (the Response constructor refuses one). */
const NO_BODY = [101, 103, 204, 205, 304];

/**
 * The hook: buffers the body (under `maxBytes`, within what is left of the attempt) and hands ky an
 * in-memory copy. A 2xx body that does not arrive in time, or cut mid-way, forces ky's retry when the call may repeat
 * (same request, so the same Idempotency-Key), else it is the TimeoutError; one over the cap is the
 * InvalidResponseError, never retried. An error body over the cap, too slow or cut is dropped: the status
 * still makes the typed ApiError (and decides its retry), only without the body's code and message.
 * @internal
 */
export function attemptBodyHook(plan: AttemptBody): AfterResponseHook {
  return async ({ response, retryCount }) => {
    if (response.ok && !plan.readsAnswer) return undefined;
    const left = Math.max(1, plan.timeoutMs - (performance.now() - plan.startedAt()));
    let text = '';
    try {
      text = await readCapped(response, {
        maxBytes: plan.maxBytes,
        timeoutMs: left,
        operation: plan.operation,
      });
    } catch (error) {
      // An error body that fails to arrive whole is only decoration lost, as ky's own read treats it.
      if (!response.ok) text = '';
      else {
        const failure = bodyFailure(error, plan);
        if (failure && retryCount < plan.retries) {
          // ky's retryCount counts retries made so far: this is retry number retryCount + 1.
          const delay = retryDelayMs(failure, retryCount + 1) ?? 0;
          plan.onRetry(failure, retryCount + 2, delay);
          return ky.retry({ delay, code: 'body_not_read', cause: failure });
        }
        // The transport maps what is thrown (a cut connection to a redacted ConnectionError).
        throw error;
      }
    }
    if (response.ok && plan.onAnswer) {
      plan.onAnswer(text);
      return undefined;
    }
    const copy = new Response(NO_BODY.includes(response.status) ? null : text, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // What the caller may read off `withResponse()` stays the answer's own.
    Object.defineProperties(copy, {
      url: { value: response.url },
      redirected: { value: response.redirected },
    });
    return copy;
  };
}
