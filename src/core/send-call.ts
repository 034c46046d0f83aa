// Sending one prepared call through ky: its attempts, timeouts and retries under the SDK's policy, the
// body read within each attempt, the request log, and what a failure becomes.

import ky, { isHTTPError, isNetworkError, isTimeoutError, type KyInstance, type Options } from 'ky';
import type { Endpoint } from '../endpoints.js';
import {
  annotate,
  endSpan,
  injectContext,
  metric,
  spanEvent,
  startSpan,
  telemetryLoading,
} from '../telemetry.js';
import { ApiError, apiErrorName } from './api-error.js';
import { attemptFetch } from './attempt-fetch.js';
import type { TransportConfig } from './client-config.js';
import { AgentMessagingError, ConnectionError, TimeoutError } from './errors.js';
import { errorFromAnswer, redact } from './response.js';
import { abortedError, kyRetry } from './retry.js';
import type { UploadSpec } from './transport.js';

/** One call as sent: ky's options plus what logs and errors need. @internal */
export interface Call {
  url: string;
  method: Endpoint['method'];
  /** The path without query (never an upload URL, which is a grant in itself), for logs. */
  logPath: string;
  /** The endpoint's path template (`/v1/messages/{id}`), for the call's span. */
  route: string;
  operation: string;
  headers: Record<string, string>;
  body: BodyInit | undefined;
  signal: AbortSignal | undefined;
  timeoutMs: number;
  retries: number;
  /** The 2xx body is read inside the attempt (JSON calls); raw and upload answers are handed over unread. */
  readsAnswer: boolean;
  /** The 2xx body as the attempt read it (JSON calls). */
  answer?: string;
  onUploadProgress?: UploadSpec['onProgress'];
}

/**
 * The ky instance of one client. The client's own `fetch` is not given to ky: each call's attempt
 * fetch (attempt-fetch.ts) calls it, or `globalThis.fetch` looked up per attempt (msw).
 * @internal
 */
export const createKy = (): KyInstance => ky.create({});

/**
 * Sends `call` through the client's ky instance, which times each attempt and retries under the SDK's
 * policy; the attempt's own `fetch` (attempt-fetch.ts) reads the answer's body inside the attempt, so
 * no ky hook is needed. A failure becomes the SDK's typed error.
 * @internal
 */
export async function sendCall(client: KyInstance, call: Call, config: TransportConfig): Promise<Response> {
  if (call.signal?.aborted) throw abortedError(call.signal);
  const loading = telemetryLoading();
  if (loading) await loading;
  // The call's span (HTTP semantic conventions), under whatever span is active (a reply, a handler).
  const span = startSpan(`${call.method} ${call.route}`, {}, undefined, 'client');
  annotate(span, {
    'http.request.method': call.method,
    'url.template': call.route,
    'server.address': hostOf(call.url),
  });
  injectContext(span, call.headers);
  const log = config.log;
  let attempt = 1;
  let started = 0;
  const logAttempt = (response: Response | undefined, failure?: unknown) =>
    log?.('agent-messaging request', {
      method: call.method,
      path: call.logPath,
      status: response?.status,
      attempt,
      requestId: response?.headers.get('request-id') ?? undefined,
      durationMs: Math.round(performance.now() - started),
      error: response && !response.ok ? apiErrorName(response.status) : (failure as Error | undefined)?.name,
    });
  const onRetry = (failure: unknown, next: number, delayMs: number) => {
    // An error answer was logged as it arrived; any other failure is logged here, with its attempt.
    if (!ApiError.is(failure)) logAttempt(undefined, failure);
    attempt = next;
    spanEvent(span, 'retry', {
      attempt: next,
      'retry.delay_ms': delayMs,
      'retry.reason': (failure as Error).name,
    });
    metric.retry(call.method, call.route);
    log?.('agent-messaging retry', {
      method: call.method,
      path: call.logPath,
      attempt: next,
      delayMs,
      reason: (failure as Error).name,
    });
  };
  // A JSON body goes with the attempt's fetch when that is globalThis.fetch (see AttemptPlan.body).
  const bodyInFetch = !config.fetch && typeof call.body === 'string' && !call.onUploadProgress;
  const options: Options = {
    method: call.method,
    headers: call.headers,
    timeout: call.timeoutMs,
    retry: kyRetry(call.retries, (error) => toSdkError(error, call, config.token), onRetry),
    fetch: attemptFetch({
      fetch: config.fetch,
      body: bodyInFetch ? (call.body as string) : undefined,
      readsAnswer: call.readsAnswer,
      maxBytes: config.maxResponseBytes,
      operation: call.operation,
      signal: call.signal,
      onSend: () => {
        started = performance.now();
      },
      onAnswer: (response, text) => {
        call.answer = text;
        if (log) logAttempt(response);
      },
    }),
  };
  // Only the keys a call uses: ky merges every key of its options into a new object, one by one.
  if (call.body !== undefined && !bodyInFetch) options.body = call.body;
  if (call.signal !== undefined) options.signal = call.signal;
  if (call.onUploadProgress) options.onUploadProgress = call.onUploadProgress;
  try {
    const response = await client(call.url, options);
    annotate(span, { 'http.response.status_code': response.status });
    endSpan(span);
    return response;
  } catch (error) {
    const failure = toSdkError(error, call, config.token);
    if (!isHTTPError(error)) logAttempt(undefined, failure);
    if (ApiError.is(failure)) annotate(span, { 'http.response.status_code': failure.status });
    endSpan(span, failure);
    throw failure;
  }
}

/** The host of a URL, for `server.address`. */
function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

/** What a failure of ky's becomes: the typed ApiError, a timeout, an abort, or a lost connection. */
function toSdkError(error: unknown, call: Call, secret: string | undefined): AgentMessagingError {
  if (AgentMessagingError.is(error)) return error;
  if (call.signal?.aborted) return abortedError(call.signal);
  if (isHTTPError(error)) return errorFromAnswer(error.response, error.data, secret);
  if (isTimeoutError(error)) {
    return new TimeoutError(`${call.operation}: no answer within ${call.timeoutMs} ms (timeoutMs).`);
  }
  // ky's NetworkError holds the Request, whose headers carry the token: keep only what fetch threw.
  const cause = isNetworkError(error) ? error.cause : error;
  const detail = redact(cause instanceof Error ? cause.message : String(cause), secret);
  return new ConnectionError(`${call.operation}: the connection failed (${detail}).`, { cause });
}
