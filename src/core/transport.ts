// The one place requests leave the process: auth, idempotency keys, per-attempt timeouts, retries, error mapping.

import ky, { type KyInstance } from 'ky';
import type * as z from 'zod/mini';
import { ApiError, RateLimitError } from './api-error.js';
import { ApiPromise, type WithResponse } from './api-promise.js';
import { attemptOnce, type PreparedCall } from './attempt.js';
import type { TransportConfig } from './client-config.js';
import { randomIdempotencyKey } from './idempotency.js';
import type { RequestOptions } from './options.js';
import { parseJsonAnswer } from './response.js';
import { isTransient, parseRetryAfter, retryDelayMs, sleep } from './retry.js';
import { checkRequestOptions } from './validate.js';

/** The HTTP methods the service uses. */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** What every call names: where it goes and how. */
export interface CallSpec {
  method: HttpMethod;
  /** Path under the base URL, such as `/v1/conversations/cnv_1/messages`, ids already encoded. */
  path: string;
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  /** Send an `Idempotency-Key`, generated when the caller gave none, the same on every retry. */
  requiresIdempotencyKey?: boolean;
  /** Safe to repeat without a key, by PROTOCOL.md (reactions, receipts, accept): retried like a GET. */
  idempotent?: boolean;
  /** The public method, such as `messages.send`, for error messages and logs. */
  operation?: string;
  /** The caller's per-call options. */
  options?: RequestOptions | undefined;
}

/** A JSON call whose answer is parsed with `schema`. */
export interface RequestSpec<S extends z.ZodMiniType> extends CallSpec {
  /** The JSON body (already validated by the resource). */
  body?: unknown;
  /** The schema of a 2xx answer. */
  schema: S;
}

/** A call whose 2xx answer is handed over unread (streaming). */
export interface RawSpec extends CallSpec {
  /** A JSON value, or a byte stream sent with `duplex: 'half'` (and then never retried). */
  body?: unknown;
  /** `content-type` of the body; `application/json` by default. */
  contentType?: string;
  /** `accept` header, such as `text/event-stream`. */
  accept?: string;
}

/** A PUT of raw bytes to an absolute URL outside `/v1` (an upload handle), without the bearer token. */
export interface UploadSpec {
  url: string;
  body: Blob | Uint8Array<ArrayBuffer>;
  contentType: string;
  onProgress?:
    | ((progress: { percent: number; transferredBytes: number; totalBytes: number }) => void)
    | undefined;
  operation?: string;
  options?: RequestOptions | undefined;
}

const isByteStream = (body: unknown): body is ReadableStream<Uint8Array> =>
  typeof ReadableStream !== 'undefined' && body instanceof ReadableStream;

/**
 * One per client: holds the ky instance (created once), the bearer token and the retry policy.
 * Resources validate their input first; the transport sends, retries and maps errors.
 * @internal
 */
export class Transport {
  /** The base URL, without a trailing slash. */
  readonly baseUrl: string;
  readonly #config: TransportConfig;
  readonly #ky: KyInstance;
  #plainKy: KyInstance | undefined;

  constructor(config: TransportConfig) {
    this.#config = config;
    this.baseUrl = config.baseUrl;
    this.#ky = ky.create({
      prefix: config.baseUrl,
      headers: config.token === undefined ? {} : { authorization: `Bearer ${config.token}` },
      retry: 0,
      timeout: false,
      throwHttpErrors: false,
      ...(config.fetch ? { fetch: config.fetch } : {}),
    });
  }

  /** A JSON call: resolves with the answer parsed by `spec.schema`, unknown fields kept. */
  request<S extends z.ZodMiniType>(spec: RequestSpec<S>): ApiPromise<z.output<S>> {
    return new ApiPromise(this.#request(spec));
  }

  /**
   * A call whose 2xx answer is returned unread, once its status is known; a non-2xx answer becomes the
   * typed ApiError. A JSON body is retried like `request`; a byte stream is sent once.
   */
  async raw(spec: RawSpec): Promise<Response> {
    const body = isByteStream(spec.body) ? spec.body : json(spec.body);
    const call = this.#prepare(spec, body, spec.contentType, typeof body === 'object');
    if (spec.accept) call.headers.accept = spec.accept;
    return this.#withRetries(call, async (attempt) => (await attemptOnce(call, attempt, false)).response);
  }

  /**
   * PUTs bytes to an upload URL (no Authorization header: the URL carries its own grant). Without a
   * per-call `timeoutMs`, each attempt gets the client's timeout plus 10 s per MB of body.
   */
  async upload(spec: UploadSpec): Promise<Response> {
    this.#plainKy ??= ky.create({
      retry: 0,
      timeout: false,
      throwHttpErrors: false,
      ...(this.#config.fetch ? { fetch: this.#config.fetch } : {}),
    });
    const operation = spec.operation ?? 'upload';
    const call = this.#prepare(
      { method: 'PUT', path: '', operation, options: spec.options },
      spec.onProgress ? inParts(spec.body) : spec.body,
      spec.contentType,
      false,
    );
    call.ky = this.#plainKy;
    call.input = spec.url;
    // The attempt covers sending the bytes: unless told otherwise, allow 10 s more per MB.
    if (spec.options?.timeoutMs === undefined) {
      call.timeoutMs += Math.ceil((spec.body instanceof Blob ? spec.body.size : spec.body.byteLength) / 100);
    }
    // An upload URL is a grant in itself (its path or query holds a token): logs never show it.
    call.logPath = 'upload_url';
    call.onUploadProgress = spec.onProgress;
    return this.#withRetries(call, async (attempt) => (await attemptOnce(call, attempt, true)).response);
  }

  async #request<S extends z.ZodMiniType>(spec: RequestSpec<S>): Promise<WithResponse<z.output<S>>> {
    const call = this.#prepare(spec, json(spec.body), undefined, false);
    call.headers.accept = 'application/json';
    return this.#withRetries(call, async (attempt) => {
      const { response, text } = await attemptOnce(call, attempt, true);
      return parseJsonAnswer(spec.schema, response, text ?? '', call);
    });
  }

  #prepare(spec: CallSpec, body: BodyInit | undefined, contentType: string | undefined, stream: boolean) {
    const operation = spec.operation ?? `${spec.method} ${spec.path}`;
    const options = checkRequestOptions(spec.options, operation);
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = contentType ?? 'application/json';
    const key = options.idempotencyKey ?? (spec.requiresIdempotencyKey ? randomIdempotencyKey() : undefined);
    if (key !== undefined) headers['idempotency-key'] = key;
    // Lower-cased, so that a caller's `Content-Type` replaces ours instead of joining it.
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
    // Safe to repeat: reads, deletes and puts, the calls the service deduplicates by their key (the
    // four creates), and those PROTOCOL.md makes idempotent. A key on any other POST (an append, a
    // registration) is not deduplicated by the service, so it does not make a retry safe.
    const safe =
      (spec.method !== 'POST' && spec.method !== 'PATCH') ||
      spec.idempotent === true ||
      spec.requiresIdempotencyKey === true;
    const call: PreparedCall = {
      ky: this.#ky,
      input: withQuery(spec.path, spec.query),
      method: spec.method,
      logPath: spec.path,
      operation,
      headers,
      body,
      signal: options.signal,
      timeoutMs: options.timeoutMs ?? this.#config.timeoutMs,
      maxRetries: safe && !stream ? (options.maxRetries ?? this.#config.maxRetries) : 0,
      log: this.#config.log,
      secret: this.#config.token,
      onUploadProgress: undefined,
    };
    return call;
  }

  async #withRetries<T>(call: PreparedCall, run: (attempt: number) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run(attempt);
      } catch (error) {
        if (attempt > call.maxRetries || !isTransient(error)) throw error;
        const delayMs = retryDelayMs(error, attempt);
        if (delayMs === undefined) throw asRateLimit(error);
        call.log?.('agent-messaging retry', {
          method: call.method,
          path: call.logPath,
          attempt: attempt + 1,
          delayMs,
          reason: (error as Error).name,
        });
        await sleep(delayMs, call.signal);
      }
    }
  }

  /** Hides the configuration (and its token) from `console.log` and `JSON.stringify`. */
  toJSON(): { baseUrl: string } {
    return { baseUrl: this.baseUrl };
  }
}

/**
 * The error for a `Retry-After` too long to sleep on: a RateLimitError with `retryAfter`, whatever the
 * status (a 503 with `Retry-After: 3600` asks the caller to come back later just as a 429 does).
 */
function asRateLimit(error: unknown): unknown {
  if (!ApiError.is(error) || RateLimitError.is(error)) return error;
  return new RateLimitError({
    status: error.status,
    code: error.code,
    message: error.message.replace(/^\d+(?: \S+)?: /, '').replace(/ \(request [^)]*\)$/, ''),
    requestId: error.requestId,
    headers: error.headers,
    retryAfter: parseRetryAfter(error.headers['retry-after']),
  });
}

const json = (body: unknown): string | undefined => (body === undefined ? undefined : JSON.stringify(body));

function withQuery(path: string, query: CallSpec['query']): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined) params.append(name, String(value));
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

const PROGRESS_PART_BYTES = 64 * 1024;

/**
 * The same bytes as a Blob of 64 KiB parts. fetch reads an in-memory body in one piece, so upload
 * progress would be reported once, at the end; read part by part, it is reported as the bytes go.
 */
function inParts(body: Blob | Uint8Array<ArrayBuffer>): Blob {
  const size = body instanceof Blob ? body.size : body.byteLength;
  const parts: (Blob | Uint8Array<ArrayBuffer>)[] = [];
  for (let offset = 0; offset < size; offset += PROGRESS_PART_BYTES) {
    const end = Math.min(size, offset + PROGRESS_PART_BYTES);
    parts.push(body instanceof Blob ? body.slice(offset, end) : body.subarray(offset, end));
  }
  return new Blob(parts, body instanceof Blob ? { type: body.type } : {});
}
