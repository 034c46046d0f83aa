// Sending one prepared call through ky: its attempts, timeouts and retries under the SDK's policy, the
// body read within each attempt, the request log, and what a failure becomes.

import ky, { isNetworkError, isTimeoutError, type Options } from 'ky';
import { ErrorBody } from '../schemas/errors.js';
import {
  annotate,
  endSpan,
  injectContext,
  recordMetric,
  spanEvent,
  startSpan,
  telemetryLoading,
} from '../telemetry.js';
import { ApiError, type ApiErrorInit, createApiError, RateLimitError } from './api-error.js';
import type { TransportConfig } from './client-config.js';
import { AgentMessagingError, ConnectionError, InvalidResponseError, TimeoutError } from './errors.js';
import { readAtMost } from './read-at-most.js';
import { abortedError, isRetryStatus, kyRetry, parseRetryAfter, retryAfterTooLong } from './retry.js';
import type { Call } from './transport.js';

/**
 * Sends `call` through ky, which times each attempt and retries under the SDK's policy. The client's
 * own `fetch` is not given to ky: each attempt calls it, or `globalThis.fetch` looked up per attempt
 * (msw). A failure becomes the SDK's typed error.
 * @internal
 */
export async function sendCall(call: Call, config: TransportConfig): Promise<Response> {
  if (call.signal?.aborted) throw abortedError(call.signal);
  const loading = telemetryLoading();
  if (loading) await loading;
  // The call's span (HTTP semantic conventions), under whatever span is active (a reply, a handler).
  const span = startSpan(`${call.method} ${call.route}`, {}, undefined, 'CLIENT');
  annotate(span, {
    'http.request.method': call.method,
    'url.template': call.route,
    'server.address': new URL(call.url).hostname,
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
      error: (failure as Error | undefined)?.name,
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
    recordMetric('client.retries', 1, { 'http.request.method': call.method, 'url.template': call.route });
    log?.('agent-messaging retry', {
      method: call.method,
      path: call.logPath,
      attempt: next,
      delayMs,
      reason: (failure as Error).name,
    });
  };
  /**
   * One attempt as ky runs it: it sends the request and reads the answer's body before it resolves.
   * ky's per-attempt timer wraps it, so `timeoutMs` covers the body as well as the headers, and a body
   * that stalls or is cut is one failed attempt under the one retry policy (retry.ts), repeated with
   * the same request (the same Idempotency-Key). No afterResponse hook: ky would clone (tee) the
   * answer for it and run it through extra promises on every call. A 2xx body over the cap is the
   * InvalidResponseError (never retried); one cut mid-way is a ConnectionError (retried when the call
   * may repeat). An error answer is thrown here as the typed ApiError, whose retry the policy decides;
   * its body is read under the cap too, and one over the cap or cut is dropped: the status still makes
   * the ApiError, only without the body's code and message.
   */
  const attemptFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    started = performance.now();
    const response = await (config.fetch ?? globalThis.fetch)(input, init);
    const maxBytes = config.maxResponseBytes;
    call.answer = undefined;
    if (response.ok) {
      if (call.readsAnswer) {
        try {
          call.answer = await readCapped(response, maxBytes, call.operation);
        } catch (error) {
          // The caller's abort and an answer over the cap are final; ky maps the abort itself.
          if (InvalidResponseError.is(error) || call.signal?.aborted) throw error;
          const message = `${call.operation}: the connection failed while the answer was read.`;
          throw new ConnectionError(message, { cause: error });
        }
      }
      if (log) logAttempt(response);
      return response;
    }
    // An error body that fails to arrive whole is only decoration lost, as ky's own read treats it.
    const text = await readCapped(response, maxBytes, call.operation).catch(() => '');
    const failure = errorFromAnswer(response, text, config.token);
    if (log) logAttempt(response, failure);
    throw failure;
  };
  const options: Options = {
    method: call.method,
    headers: call.headers,
    timeout: call.timeoutMs,
    retry: kyRetry(call.retries, (error) => toSdkError(error, call, config.token), onRetry),
    fetch: attemptFetch,
  };
  // Only the keys a call uses: ky merges every key of its options into a new object, one by one.
  if (call.body !== undefined) options.body = call.body;
  if (call.signal !== undefined) options.signal = call.signal;
  if (call.onUploadProgress) options.onUploadProgress = call.onUploadProgress;
  try {
    const response = await ky(call.url, options);
    annotate(span, { 'http.response.status_code': response.status });
    endSpan(span);
    return response;
  } catch (error) {
    const failure = toSdkError(error, call, config.token);
    // An error answer was logged as it arrived.
    if (!ApiError.is(failure)) logAttempt(undefined, failure);
    if (ApiError.is(failure)) annotate(span, { 'http.response.status_code': failure.status });
    endSpan(span, failure);
    throw failure;
  }
}

/** What a failure becomes: the caller's abort, the attempt's own SDK error, a timeout, or a lost connection. */
function toSdkError(error: unknown, call: Call, secret: string | undefined): AgentMessagingError {
  if (call.signal?.aborted) return abortedError(call.signal);
  if (AgentMessagingError.is(error)) return error;
  if (isTimeoutError(error)) {
    return new TimeoutError(`${call.operation}: no answer within ${call.timeoutMs} ms (timeoutMs).`);
  }
  // ky's NetworkError holds the Request, whose headers carry the token: keep only what fetch threw.
  const cause = isNetworkError(error) ? error.cause : error;
  const detail = redact(cause instanceof Error ? cause.message : String(cause), secret);
  return new ConnectionError(`${call.operation}: the connection failed (${detail}).`, { cause });
}

/** Replaces every occurrence of the credential, so no text the SDK shows can carry it. */
function redact(text: string, secret: string | undefined): string {
  return secret && text.includes(secret) ? text.replaceAll(secret, '***') : text;
}

/**
 * The typed ApiError for a non-2xx answer and its body's text. Header values are redacted too: a
 * hostile service may echo the bearer token in one.
 */
function errorFromAnswer(response: Response, text: string, secret: string | undefined): ApiError {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = redact(value, secret);
  const parsed = ErrorBody.safeParse(parseJson(text));
  const message = parsed.success
    ? parsed.data.error.message
    : `the service answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  const init: ApiErrorInit = {
    status: response.status,
    code: parsed.success ? parsed.data.error.code : undefined,
    message: redact(message, secret),
    requestId: headers['request-id'],
    headers,
    retryAfter: parseRetryAfter(headers['retry-after']),
  };
  // A pause longer than the SDK sleeps on asks the caller to come back later, as a 429 does
  // (a 503 with `Retry-After: 3600` too): a RateLimitError keeping its status.
  const later = retryAfterTooLong(init.retryAfter) && isRetryStatus(init.status, init.code);
  return later ? new RateLimitError(init) : createApiError(init);
}

/** JSON text parsed, or undefined when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One decoder for every answer: decoding whole (not `stream: true`) takes the fast path, and holds no state. */
const utf8 = new TextDecoder();

/**
 * The body as text, read under `maxBytes` so that a huge or decompression-bombed answer stops there
 * (memory stays bounded) instead of being buffered whole; the bytes are decoded once, at the end. No
 * timer of its own: it runs inside the attempt, whose timeout covers it.
 */
async function readCapped(response: Response, maxBytes: number, operation: string): Promise<string> {
  if (!response.body) return '';
  const { bytes, over } = await readAtMost(response.body, maxBytes);
  if (over) {
    throw new InvalidResponseError(
      `${operation}: the answer is larger than ${maxBytes} bytes (maxResponseBytes).`,
      {
        status: response.status,
        requestId: response.headers.get('request-id') ?? undefined,
      },
    );
  }
  return utf8.decode(bytes);
}
