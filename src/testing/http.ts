// Answers in the wire's shape: JSON bodies, the error body of PROTOCOL.md section 2, Request-Id.
import type { ErrorCode } from '../schemas/errors.js';

/** The code PROTOCOL.md section 2 gives each error status, for a fault that names none. */
export const DEFAULT_ERROR_CODES: Record<number, ErrorCode> = {
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
    readonly headers: Record<string, string> = {},
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
export function json(status: number, body: unknown, headers: Record<string, string> = {}): JsonAnswer {
  const all: Record<string, string> = { 'content-type': 'application/json' };
  for (const name in headers) all[name.toLowerCase()] = headers[name]!;
  return new JsonAnswer(status, JSON.stringify(body), all);
}

/** The answer as a Fetch `Response` (a JSON answer's text becomes its body). */
export function toResponse(answer: Answer): Response {
  if (answer instanceof Response) return answer;
  return new Response(answer.text, { status: answer.status, headers: answer.headers });
}

/** The error body for a status and code. */
export function errorResponse(error: MockError): JsonAnswer {
  return json(error.status, { error: { code: error.code, message: error.message } }, error.headers);
}

/** An error status with the code of section 2 unless one is given (used by `status` faults). */
export function statusResponse(status: number, code?: string, retryAfter?: number): JsonAnswer {
  const headers: Record<string, string> =
    retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) };
  const resolved =
    code ?? DEFAULT_ERROR_CODES[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request');
  return json(status, { error: { code: resolved, message: `injected fault: HTTP ${status}` } }, headers);
}

/**
 * The same answer with `Request-Id` (and any extra headers, lower-case names) set; a network error
 * stays as it is.
 */
export function withHeaders<A extends Answer>(response: A, headers: Record<string, string>): A;
export function withHeaders(response: Answer, headers: Record<string, string>): Answer {
  if (response instanceof JsonAnswer) {
    Object.assign(response.headers, headers);
    return response;
  }
  if (response.type === 'error') return response;
  try {
    // The mock's own answers have mutable headers: set them in place, no second Response.
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  } catch {
    // Immutable headers (an answer from fetch): copy below.
  }
  const merged = new Headers(response.headers);
  for (const [name, value] of Object.entries(headers)) merged.set(name, value);
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers: merged,
  });
}

/** 1 MiB: the largest JSON body the service reads (PROTOCOL.md section 2). */
export const MAX_BODY_BYTES = 1024 * 1024;
