// Reading the service's answers: a 2xx body (capped) against its schema, an error body into the typed ApiError.

import type * as z from 'zod/mini';
import { ErrorBody } from '../schemas/errors.js';
import { fieldIssues, safeParse } from '../schemas/issues.js';
import { type ApiError, type ApiErrorInit, createApiError, RateLimitError } from './api-error.js';
import type { WithResponse } from './api-promise.js';
import { InvalidResponseError, TimeoutError } from './errors.js';
import { isRetryStatus, parseRetryAfter, retryAfterTooLong } from './retry.js';

/** Replaces every occurrence of the credential, so no text the SDK shows can carry it. @internal */
export function redact(text: string, secret: string | undefined): string {
  return secret && text.includes(secret) ? text.replaceAll(secret, '***') : text;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The typed ApiError for a non-2xx answer; `data` is its body as ky read it (parsed JSON, text, or
 * undefined). Header values are redacted too: a hostile service may echo the bearer token in one.
 * @internal
 */
export function errorFromAnswer(response: Response, data: unknown, secret: string | undefined): ApiError {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = redact(value, secret);
  const parsed = ErrorBody.safeParse(typeof data === 'string' ? parseJson(data) : data);
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

/** What bounds the read of one answer body. @internal */
export interface ReadLimits {
  /** Most bytes, after decompression; more is an InvalidResponseError. */
  maxBytes: number;
  /** Milliseconds the read may take; longer is a TimeoutError. */
  timeoutMs: number;
  operation: string;
}

/**
 * The body as text, read chunk by chunk so that a huge or decompression-bombed answer stops at
 * `maxBytes` (memory stays bounded) instead of being buffered whole.
 * @internal
 */
export async function readCapped(response: Response, limits: ReadLimits): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = '';
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void reader.cancel().catch(() => undefined);
  }, limits.timeoutMs);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (timedOut) break;
      if (done) return text + decoder.decode();
      size += value.byteLength;
      if (size > limits.maxBytes) {
        void reader.cancel().catch(() => undefined);
        throw new InvalidResponseError(
          `${limits.operation}: the answer is larger than ${limits.maxBytes} bytes (maxResponseBytes).`,
          { status: response.status, requestId: response.headers.get('request-id') ?? undefined },
        );
      }
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    clearTimeout(timer);
    // Unlocked, the read stream's later cancel (ky cancels the clone it handed a hook) is a no-op
    // instead of a rejected TypeError whose stack trace costs more CPU than the read itself.
    reader.releaseLock();
  }
  throw new TimeoutError(
    `${limits.operation}: the answer was not read within ${limits.timeoutMs} ms (timeoutMs).`,
  );
}

/** Parses a 2xx JSON answer with its schema; anything else is an InvalidResponseError. @internal */
export function parseJsonAnswer<S extends z.ZodMiniType>(
  schema: S,
  response: Response,
  text: string,
  operation: string,
): WithResponse<z.output<S>> {
  const requestId = response.headers.get('request-id') ?? undefined;
  const body = parseJson(text);
  if (body === undefined) {
    throw new InvalidResponseError(
      `${operation}: the service answered ${response.status} with a body that is not JSON.`,
      { status: response.status, requestId },
    );
  }
  const result = safeParse(schema, body);
  if (!result.success) {
    const issues = fieldIssues(result.error);
    const list = issues.map(({ field, message }) => `${field || 'body'}: ${message}`).join('; ');
    throw new InvalidResponseError(`${operation}: the answer does not have the expected shape (${list}).`, {
      status: response.status,
      requestId,
      issues,
    });
  }
  return { data: result.data, response, requestId };
}
