// Requests and answers as the mock's one entry (service.ts) reads and writes them: a request from any
// door as a MockRequest (no Fetch `Request` built for a node:http request), answers in the wire's
// shape (JSON bodies, the error body of PROTOCOL.md section 2, Request-Id), a JSON answer kept as
// text until a door writes it.
import type { ErrorCode } from '../schemas/errors.js';

/** The code PROTOCOL.md section 2 gives each error status, for a fault that names none. */
const DEFAULT_ERROR_CODES: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'idempotency_in_progress',
  410: 'invite_expired',
  413: 'payload_too_large',
  415: 'streaming_unsupported',
  422: 'idempotency_key_reused',
  429: 'rate_limited',
  500: 'internal_error',
  503: 'unavailable',
};

/** A rule of the service said no: becomes `{ error: { code, message } }` with this status. */
export class MockError extends Error {
  override name = 'MockError';

  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** 400 `invalid_request` naming the field. */
export const invalid = (message: string) => new MockError(400, 'invalid_request', message);
/** 404 `not_found`. */
export const notFound = (what: string) => new MockError(404, 'not_found', `${what} not found`);
/** 403 `forbidden`. */
export const forbidden = (message: string) => new MockError(403, 'forbidden', message);

/**
 * A JSON answer as text, status and headers (lower-case names). It becomes a Fetch `Response` only
 * where one is handed out (mock.fetch, msw); the loopback door writes it as it is, so the common
 * answer never pays for a `Response` and its body stream.
 */
export class JsonAnswer {
  constructor(
    readonly status: number,
    readonly text: string,
    readonly headers: Record<string, string>,
  ) {}

  /** True for a 2xx status, as `Response.ok`. */
  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }
}

/** What a rule answers: JSON, or a Fetch `Response` (an event stream, a file, a network error). */
export type Answer = JsonAnswer | Response;

/** A JSON answer. */
export function json(status: number, body: unknown): JsonAnswer {
  return new JsonAnswer(status, JSON.stringify(body), { 'content-type': 'application/json' });
}

/** The error body for a status and code. */
export function errorResponse(error: MockError): JsonAnswer {
  return json(error.status, { error: { code: error.code, message: error.message } });
}

/** An error status with the code of section 2 unless one is given (used by `status` faults). */
export function statusResponse(status: number, code?: string, retryAfter?: number): JsonAnswer {
  const resolved =
    code ?? DEFAULT_ERROR_CODES[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request');
  const answer = json(status, { error: { code: resolved, message: `injected fault: HTTP ${status}` } });
  if (retryAfter !== undefined) answer.headers['retry-after'] = String(retryAfter);
  return answer;
}

/**
 * The same answer with `Request-Id` (and any extra headers, lower-case names) set in place: every
 * answer is the mock's own, so its headers are mutable; a network error stays as it is.
 */
export function withHeaders<A extends Answer>(response: A, headers: Record<string, string>): A {
  if (response instanceof JsonAnswer) Object.assign(response.headers, headers);
  else if (response.type !== 'error') for (const name in headers) response.headers.set(name, headers[name]!);
  return response;
}

/** A content type's media type: lower case, without its parameters. */
export function mediaType(contentType: string | null | undefined): string | undefined {
  return contentType?.split(';')[0]?.trim().toLowerCase();
}

/** 1 MiB: the largest JSON body the service reads (PROTOCOL.md section 2). */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * A request body: bytes a door read whole, or a stream (NDJSON, a large upload, a Fetch body). A
 * rule that reads it whole or as a stream wraps it in a Response (bytes read whole are copied).
 */
export type RequestBody = Uint8Array | ReadableStream<Uint8Array> | null;

/** A request as the mock's one entry reads it, whichever door it came through. */
export interface MockRequest {
  /** The method as sent (upper case from the loopback door). */
  readonly method: string;
  readonly url: URL;
  readonly headers: Headers;
  readonly body: RequestBody;
  /**
   * A Fetch request's signal: an event stream stops following, and its body errors, when it aborts
   * (the loopback door cancels the body instead, when its client goes away).
   */
  readonly signal?: AbortSignal | undefined;
}
