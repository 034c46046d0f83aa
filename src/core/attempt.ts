// One attempt of a call: a timer, the fetch through ky, the body read, and what a failure becomes.

import { isNetworkError, type KyInstance } from 'ky';
import type { ApiError } from './api-error.js';
import { AgentMessagingError, ConnectionError, TimeoutError } from './errors.js';
import type { LogFields } from './options.js';
import { errorFromAnswer, redact } from './response.js';
import { abortedError } from './retry.js';

/** A call checked and built once, then attempted one or more times. @internal */
export interface PreparedCall {
  ky: KyInstance;
  /** Path and query under the ky prefix, or an absolute URL for uploads. */
  input: string;
  method: string;
  /** The path without query, for logs and messages. */
  logPath: string;
  operation: string;
  headers: Record<string, string>;
  body: BodyInit | undefined;
  signal: AbortSignal | undefined;
  timeoutMs: number;
  maxRetries: number;
  log: ((message: string, fields: LogFields) => void) | undefined;
  /** The bearer token, scrubbed from any text that reaches an error. */
  secret: string | undefined;
  onUploadProgress:
    | ((progress: { percent: number; transferredBytes: number; totalBytes: number }) => void)
    | undefined;
}

/** An attempt's 2xx answer; `text` is the body when it was read. */
export interface AttemptResult {
  response: Response;
  text: string | undefined;
}

/**
 * Sends the call once. The timeout covers the answer's headers and, when `readBody`, its body; a raw
 * answer is handed over before its body is read, so a long stream is not cut by `timeoutMs`.
 * @internal
 */
export async function attemptOnce(
  call: PreparedCall,
  attempt: number,
  readBody: boolean,
): Promise<AttemptResult> {
  if (call.signal?.aborted) throw abortedError(call.signal);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, call.timeoutMs);
  const signal = call.signal ? AbortSignal.any([call.signal, controller.signal]) : controller.signal;
  const started = call.log ? performance.now() : 0;
  let response: Response | undefined;
  try {
    response = await call.ky(call.input, {
      method: call.method,
      headers: call.headers,
      body: call.body,
      signal,
      ...(call.onUploadProgress ? { onUploadProgress: call.onUploadProgress } : {}),
    });
    if (!response.ok) throw errorFromAnswer(response, await response.text(), call.secret);
    const text = readBody ? await response.text() : undefined;
    logAttempt(call, attempt, started, response);
    return { response, text };
  } catch (error) {
    const failure = toSdkError(error, call, timedOut);
    logAttempt(call, attempt, started, response, failure);
    throw failure;
  } finally {
    clearTimeout(timer);
  }
}

function toSdkError(error: unknown, call: PreparedCall, timedOut: boolean): AgentMessagingError {
  if (AgentMessagingError.is(error)) return error;
  if (call.signal?.aborted) return abortedError(call.signal);
  if (timedOut) {
    return new TimeoutError(`${call.operation}: no answer within ${call.timeoutMs} ms (timeoutMs).`);
  }
  // ky's NetworkError holds the Request, whose headers carry the token: keep only what fetch threw.
  const cause = isNetworkError(error) ? error.cause : error;
  const detail = redact(cause instanceof Error ? cause.message : String(cause), call.secret);
  return new ConnectionError(`${call.operation}: the connection failed (${detail}).`, { cause });
}

function logAttempt(
  call: PreparedCall,
  attempt: number,
  started: number,
  response: Response | undefined,
  failure?: AgentMessagingError,
): void {
  if (!call.log) return;
  call.log('agent-messaging request', {
    method: call.method,
    path: call.logPath,
    status: response?.status,
    attempt,
    requestId:
      response?.headers.get('request-id') ?? (failure as ApiError | undefined)?.requestId ?? undefined,
    durationMs: Math.round(performance.now() - started),
    error: failure?.name,
  });
}
