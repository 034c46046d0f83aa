// The one place requests leave the process: auth, idempotency keys, and ky's own per-attempt timeout
// and retries under the SDK's retry policy (retry.ts); failures become the SDK's typed errors.

import ky, { isHTTPError, isNetworkError, isTimeoutError, type KyInstance, type Options } from 'ky';
import type * as z from 'zod/mini';
import { ApiError, apiErrorName } from './api-error.js';
import { ApiPromise, type WithResponse } from './api-promise.js';
import type { TransportConfig } from './client-config.js';
import { AgentMessagingError, ConnectionError, TimeoutError } from './errors.js';
import { randomIdempotencyKey } from './idempotency.js';
import type { RequestOptions } from './options.js';
import { errorFromAnswer, parseJsonAnswer, readCapped, redact } from './response.js';
import { abortedError, kyRetry } from './retry.js';
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

/** One call as sent: ky's options plus what logs and errors need. */
interface Call {
  url: string;
  method: HttpMethod;
  /** The path without query (never an upload URL, which is a grant in itself), for logs. */
  logPath: string;
  operation: string;
  headers: Record<string, string>;
  body: BodyInit | undefined;
  signal: AbortSignal | undefined;
  timeoutMs: number;
  retries: number;
  onUploadProgress?: UploadSpec['onProgress'];
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

  constructor(config: TransportConfig) {
    this.#config = config;
    this.baseUrl = config.baseUrl;
    this.#ky = ky.create(config.fetch ? { fetch: config.fetch } : {});
  }

  /** A JSON call: resolves with the answer parsed by `spec.schema`, unknown fields kept. */
  request<S extends z.ZodMiniType>(spec: RequestSpec<S>): ApiPromise<z.output<S>> {
    return new ApiPromise(this.#request(spec));
  }

  /**
   * A call whose 2xx answer is returned unread, once its status is known; a non-2xx answer becomes the
   * typed ApiError. A JSON body is retried like `request`; a byte stream is sent once (ky would tee it).
   */
  async raw(spec: RawSpec): Promise<Response> {
    const stream = isByteStream(spec.body);
    const call = this.#prepare(spec, stream ? (spec.body as BodyInit) : json(spec.body), spec.contentType);
    if (stream) call.retries = 0;
    if (spec.accept) call.headers.accept = spec.accept;
    return this.#send(call);
  }

  /**
   * PUTs bytes to an upload URL (no Authorization header: the URL carries its own grant). Without a
   * per-call `timeoutMs`, each attempt gets the client's timeout plus 10 s per MB of body.
   */
  async upload(spec: UploadSpec): Promise<Response> {
    const operation = spec.operation ?? 'upload';
    const body = spec.onProgress ? inParts(spec.body) : spec.body;
    const call = this.#prepare(
      { method: 'PUT', path: '', operation, options: spec.options },
      body,
      spec.contentType,
    );
    delete call.headers.authorization;
    call.url = spec.url;
    call.logPath = 'upload_url';
    call.onUploadProgress = spec.onProgress;
    // The attempt covers sending the bytes: unless told otherwise, allow 10 s more per MB.
    if (spec.options?.timeoutMs === undefined) {
      call.timeoutMs += Math.ceil((spec.body instanceof Blob ? spec.body.size : spec.body.byteLength) / 100);
    }
    const response = await this.#send(call);
    await response.body?.cancel().catch(() => undefined);
    return response;
  }

  async #request<S extends z.ZodMiniType>(spec: RequestSpec<S>): Promise<WithResponse<z.output<S>>> {
    const call = this.#prepare(spec, json(spec.body), undefined);
    call.headers.accept = 'application/json';
    const response = await this.#send(call);
    const { timeoutMs, operation } = call;
    let text: string;
    try {
      text = await readCapped(response, { maxBytes: this.#config.maxResponseBytes, timeoutMs, operation });
    } catch (error) {
      throw this.#toSdkError(error, call);
    }
    return parseJsonAnswer(spec.schema, response, text, operation);
  }

  #prepare(spec: CallSpec, body: BodyInit | undefined, contentType: string | undefined): Call {
    const operation = spec.operation ?? `${spec.method} ${spec.path}`;
    const options = checkRequestOptions(spec.options, operation);
    const headers: Record<string, string> = {};
    if (this.#config.token !== undefined) headers.authorization = `Bearer ${this.#config.token}`;
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
    return {
      url: this.baseUrl + withQuery(spec.path, spec.query),
      method: spec.method,
      logPath: spec.path,
      operation,
      headers,
      body,
      signal: options.signal,
      timeoutMs: options.timeoutMs ?? this.#config.timeoutMs,
      retries: safe ? (options.maxRetries ?? this.#config.maxRetries) : 0,
    };
  }

  /** Sends through ky, which times each attempt and retries under the SDK's policy. */
  async #send(call: Call): Promise<Response> {
    if (call.signal?.aborted) throw abortedError(call.signal);
    const log = this.#config.log;
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
        error:
          response && !response.ok ? apiErrorName(response.status) : (failure as Error | undefined)?.name,
      });
    const begin = () => {
      started = log ? performance.now() : 0;
    };
    const options: Options = {
      method: call.method,
      headers: call.headers,
      body: call.body,
      signal: call.signal,
      timeout: call.timeoutMs,
      retry: kyRetry(
        call.retries,
        (error) => this.#toSdkError(error, call),
        (failure, next, delayMs) => {
          if (!ApiError.is(failure)) logAttempt(undefined, failure);
          attempt = next;
          log?.('agent-messaging retry', {
            method: call.method,
            path: call.logPath,
            attempt: next,
            delayMs,
            reason: (failure as Error).name,
          });
        },
      ),
      hooks: {
        beforeRequest: [begin],
        beforeRetry: [begin],
        afterResponse: [({ response }) => void logAttempt(response)],
      },
      ...(call.onUploadProgress ? { onUploadProgress: call.onUploadProgress } : {}),
    };
    try {
      return await this.#ky(call.url, options);
    } catch (error) {
      const failure = this.#toSdkError(error, call);
      if (!isHTTPError(error)) logAttempt(undefined, failure);
      throw failure;
    }
  }

  /** What a failure of ky's becomes: the typed ApiError, a timeout, an abort, or a lost connection. */
  #toSdkError(error: unknown, call: Call): AgentMessagingError {
    if (AgentMessagingError.is(error)) return error;
    if (call.signal?.aborted) return abortedError(call.signal);
    const secret = this.#config.token;
    if (isHTTPError(error)) return errorFromAnswer(error.response, error.data, secret);
    if (isTimeoutError(error)) {
      return new TimeoutError(`${call.operation}: no answer within ${call.timeoutMs} ms (timeoutMs).`);
    }
    // ky's NetworkError holds the Request, whose headers carry the token: keep only what fetch threw.
    const cause = isNetworkError(error) ? error.cause : error;
    const detail = redact(cause instanceof Error ? cause.message : String(cause), secret);
    return new ConnectionError(`${call.operation}: the connection failed (${detail}).`, { cause });
  }

  /** Hides the configuration (and its token) from `console.log` and `JSON.stringify`. */
  toJSON(): { baseUrl: string } {
    return { baseUrl: this.baseUrl };
  }
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
