// Reading the service's answers: a 2xx body (capped) against its schema, an error body into the typed ApiError.

import type * as z from 'zod/mini';
import { ErrorBody } from '../schemas/errors.js';
import { fieldIssues, safeParse } from '../schemas/issues.js';
import { type ApiError, type ApiErrorInit, createApiError, RateLimitError } from './api-error.js';
import type { WithResponse } from './api-promise.js';
import { InvalidResponseError } from './errors.js';
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

/** One decoder for every answer: decoding whole (not `stream: true`) takes the fast path, and holds no state. */
const utf8 = new TextDecoder();

/**
 * The body as text, read chunk by chunk so that a huge or decompression-bombed answer stops at
 * `maxBytes` (memory stays bounded) instead of being buffered whole; the bytes are decoded once, at
 * the end. No timer of its own: it runs inside the attempt, whose timeout covers it.
 * @internal
 */
export async function readCapped(response: Response, maxBytes: number, operation: string): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      void reader.cancel().catch(() => undefined);
      throw new InvalidResponseError(
        `${operation}: the answer is larger than ${maxBytes} bytes (maxResponseBytes).`,
        { status: response.status, requestId: response.headers.get('request-id') ?? undefined },
      );
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return utf8.decode(chunks[0]);
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return utf8.decode(bytes);
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
