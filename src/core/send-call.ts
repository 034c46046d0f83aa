// Sending one prepared call through ky: its attempts, timeouts and retries under the SDK's policy, the
// body read within each attempt, the request log, and what a failure becomes. The transport loads this
// module (and with it ky) with its first call instead of at import: see transport.ts.

import ky, { isHTTPError, isNetworkError, isTimeoutError, type KyInstance, type Options } from 'ky';
import type { Endpoint } from '../endpoints.js';
import { ApiError, apiErrorName } from './api-error.js';
import { attemptBodyHook } from './attempt-body.js';
import type { TransportConfig } from './client-config.js';
import { AgentMessagingError, ConnectionError, TimeoutError } from './errors.js';
import { errorFromAnswer, redact } from './response.js';
import { abortedError, kyRetry } from './retry.js';
import type { UploadSpec } from './transport.js';

export { parseJsonAnswer } from './response.js';

/** One call as sent: ky's options plus what logs and errors need. @internal */
export interface Call {
  url: string;
  method: Endpoint['method'];
  /** The path without query (never an upload URL, which is a grant in itself), for logs. */
  logPath: string;
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

/** The ky instance of one client, with its own `fetch` when it was given one. @internal */
export const createKy = (fetch: TransportConfig['fetch']): KyInstance => ky.create(fetch ? { fetch } : {});

/**
 * Sends `call` through the client's ky instance, which times each attempt and retries under the SDK's
 * policy; a failure becomes the SDK's typed error.
 * @internal
 */
export async function sendCall(client: KyInstance, call: Call, config: TransportConfig): Promise<Response> {
  if (call.signal?.aborted) throw abortedError(call.signal);
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
  const begin = () => {
    started = performance.now();
  };
  const onRetry = (failure: unknown, next: number, delayMs: number) => {
    if (!ApiError.is(failure)) logAttempt(undefined, failure);
    attempt = next;
    log?.('agent-messaging retry', {
      method: call.method,
      path: call.logPath,
      attempt: next,
      delayMs,
      reason: (failure as Error).name,
    });
  };
  // Reads the body inside the attempt, under the client's cap; first, so that a forced retry (a body
  // too slow) skips the log hook, the retry line then reporting that attempt.
  const readBody = attemptBodyHook({
    readsAnswer: call.readsAnswer,
    maxBytes: config.maxResponseBytes,
    timeoutMs: call.timeoutMs,
    operation: call.operation,
    retries: call.retries,
    startedAt: () => started,
    aborted: () => call.signal?.aborted === true,
    onRetry,
    onAnswer: (text) => {
      call.answer = text;
    },
  });
  const options: Options = {
    method: call.method,
    headers: call.headers,
    body: call.body,
    signal: call.signal,
    timeout: call.timeoutMs,
    retry: kyRetry(call.retries, (error) => toSdkError(error, call, config.token), onRetry),
    // ky hands each afterResponse hook a clone of the answer (a tee of its body): the log hook only
    // with a logger. The body hook is always there (a raw 2xx passes it unread, its branch cancelled).
    hooks: {
      beforeRetry: [begin],
      afterResponse: log ? [readBody, ({ response }) => void logAttempt(response)] : [readBody],
    },
    ...(call.onUploadProgress ? { onUploadProgress: call.onUploadProgress } : {}),
  };
  try {
    // The first attempt's clock starts here, not in a beforeRequest hook: ky runs its hooks through
    // extra promises and a normalized-options copy, a measurable share of a small call's CPU.
    begin();
    return await client(call.url, options);
  } catch (error) {
    const failure = toSdkError(error, call, config.token);
    if (!isHTTPError(error)) logAttempt(undefined, failure);
    throw failure;
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
