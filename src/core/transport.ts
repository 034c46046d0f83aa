// The one place requests leave the process: auth, idempotency keys, and ky's own per-attempt timeout
// and retries under the SDK's retry policy (retry.ts); failures become the SDK's typed errors.

import type { Options } from 'ky';
import type * as z from 'zod/mini';
import { type Endpoint, type EndpointKey, endpoints, PATH_PARAMS, type ResponseOf } from '../endpoints.js';
import { fieldIssues, safeParse } from '../schemas/issues.js';
import { type ApiPromise, apiPromise, type WithResponse } from './api-promise.js';
import type { TransportConfig } from './client-config.js';
import { ConnectionError, InvalidResponseError } from './errors.js';
import { randomIdempotencyKey } from './idempotency.js';
import type { RequestOptions } from './options.js';
import { checkRequestOptions, parseInput, pathId } from './validate.js';

// ky and the code that sends through it (send-call.ts) are loaded by the first call, not by the
// import: ky's own import builds a Request, which loads the runtime's fetch machinery (Node's undici)
// before anything is sent, and an app's bundler can then fetch them as a chunk of their own.
let sending: typeof import('./send-call.js') | undefined;

/** What a call by key carries besides the endpoint's own method, path and schemas. */
export interface CallInit {
  /** Path parameters by their name in the template (`conversation_id`), checked and percent-encoded. */
  params?: Record<string, unknown>;
  /** Query parameters, checked with the endpoint's query schema when it has one; undefined values are left out. */
  query?: Record<string, unknown>;
  /** The JSON body, checked with the endpoint's request schema; a byte stream (raw only) is sent as is. */
  body?: unknown;
  /** The caller's per-call options. */
  options?: RequestOptions | undefined;
  /** The public method, where it is not the key (`conversations.history`), for errors and logs. */
  operation?: string;
  /** `content-type` of the body; `application/json` by default. */
  contentType?: string;
  /** `accept` header: `application/json` for `request`; for `raw`, such as `text/event-stream`. */
  accept?: string;
}

/** A PUT of raw bytes to an absolute URL outside `/v1` (an upload handle), without the bearer token. */
export interface UploadSpec {
  url: string;
  body: Blob | Uint8Array<ArrayBuffer>;
  contentType: string;
  onProgress?: Options['onUploadProgress'];
  operation: string;
  options?: RequestOptions | undefined;
}

/** One call as sent: ky's options plus what logs and errors need. @internal */
export type Call = ReturnType<typeof prepareCall>;

/**
 * One per client: holds its checked configuration (base URL, bearer token, timeouts, retries).
 * Resources validate their input first; the transport sends, retries and maps errors.
 * @internal
 */
export class Transport {
  /** The base URL, without a trailing slash. */
  readonly baseUrl: string;
  readonly #config: TransportConfig;

  constructor(config: TransportConfig) {
    this.#config = config;
    this.baseUrl = config.baseUrl;
  }

  /**
   * A JSON call to the endpoint `key`: checks params, query and body against the table (a bad one
   * rejects with a ValidationError before anything is sent) and resolves with the answer parsed by
   * the endpoint's response schema, unknown fields kept.
   */
  request<K extends EndpointKey>(key: K, init: CallInit = {}): ApiPromise<ResponseOf<K>> {
    return apiPromise(this.#request(key, init));
  }

  /**
   * A call whose 2xx answer is returned unread, once its status is known; a non-2xx answer becomes the
   * typed ApiError. A JSON body is retried like `request`; a byte stream is sent once (ky would tee it).
   */
  async raw(key: EndpointKey, init: CallInit): Promise<Response> {
    const stream = init.body instanceof ReadableStream;
    const call = prepareCall(this.#config, key, init, stream ? (init.body as BodyInit) : undefined);
    if (stream) call.retries = 0;
    return this.#send(call);
  }

  /**
   * PUTs bytes to an upload URL (no Authorization header: the URL carries its own grant). Without a
   * per-call `timeoutMs`, each attempt gets the client's timeout plus 10 s per MB of body.
   */
  async upload(spec: UploadSpec): Promise<Response> {
    const body = spec.onProgress ? inParts(spec.body) : spec.body;
    const init = { operation: spec.operation, options: spec.options, contentType: spec.contentType };
    const call = prepareCall(this.#config, 'files.upload', init, body);
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

  async #request<K extends EndpointKey>(key: K, init: CallInit): Promise<WithResponse<ResponseOf<K>>> {
    const call = prepareCall(this.#config, key, { ...init, accept: 'application/json' });
    call.readsAnswer = true;
    // Buffered under maxResponseBytes within the attempt (send-call.ts): this text is in memory.
    const response = await this.#send(call);
    const requestId = response.headers.get('request-id') ?? undefined;
    const details = { status: response.status, requestId };
    let body: unknown;
    try {
      body = JSON.parse(call.answer ?? '');
    } catch {
      const message = `${call.operation}: the service answered ${response.status} with a body that is not JSON.`;
      throw new InvalidResponseError(message, details);
    }
    const result = safeParse((endpoints[key] as Endpoint).response as z.ZodMiniType<ResponseOf<K>>, body);
    if (!result.success) {
      const issues = fieldIssues(result.error);
      const list = issues.map(({ field, message }) => `${field || 'body'}: ${message}`).join('; ');
      const message = `${call.operation}: the answer does not have the expected shape (${list}).`;
      throw new InvalidResponseError(message, { ...details, issues });
    }
    return { data: result.data, response, requestId };
  }

  /** Sends through ky, which times each attempt and retries. */
  async #send(call: Call): Promise<Response> {
    sending ??= await import('./send-call.js').catch((cause: unknown) => {
      const message = `${call.operation}: the SDK's sending code could not be loaded, so nothing was sent.`;
      throw new ConnectionError(message, { cause });
    });
    return sending.sendCall(call, this.#config);
  }
}

/** Checks the call against its endpoint and builds what is sent; `bytes` is a body sent as is. */
function prepareCall(config: TransportConfig, key: EndpointKey, init: CallInit, bytes?: BodyInit) {
  const endpoint: Endpoint = endpoints[key];
  const operation = init.operation ?? key;
  const options = checkRequestOptions(init.options, operation);
  // Each `:name` checked against its schema, named as the caller names it (`conversationId`).
  const path = endpoint.path.replace(/:(\w+)/g, (_, name: string) => {
    const value = init.params?.[name];
    const field = name.replace(/_(\w)/g, (_, letter: string) => letter.toUpperCase());
    const schema = PATH_PARAMS[name];
    return schema ? pathId(schema, value, field, operation) : encodeURIComponent(String(value));
  });
  const query = endpoint.query ? parseInput(endpoint.query, init.query ?? {}, operation) : init.query;
  let body = bytes;
  if (body === undefined && endpoint.request) {
    body = JSON.stringify(parseInput(endpoint.request, init.body, operation));
  }
  const headers: Record<string, string> = {};
  if (config.token !== undefined) headers.authorization = `Bearer ${config.token}`;
  if (body !== undefined) headers['content-type'] = init.contentType ?? 'application/json';
  const idempotencyKey =
    options.idempotencyKey ?? (endpoint.retry === 'keyed' ? randomIdempotencyKey() : undefined);
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  // Lower-cased, so that a caller's `Content-Type` replaces ours instead of joining it.
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  if (init.accept) headers.accept = init.accept;
  return {
    url: config.baseUrl + withQuery(path, query as Record<string, unknown> | undefined),
    method: endpoint.method,
    /** The path without query (never an upload URL, which is a grant in itself), for logs. */
    logPath: path,
    /** The route as the HTTP semantic conventions write it (`/v1/messages/{message_id}`), for spans. */
    route: endpoint.path.replace(/:(\w+)/g, '{$1}'),
    operation,
    headers,
    body,
    signal: options.signal,
    timeoutMs: options.timeoutMs ?? config.timeoutMs,
    // A caller's key on a `never` call (an append, a registration) is not deduplicated by the service,
    // so it does not make a repeat safe.
    retries: endpoint.retry === 'never' ? 0 : (options.maxRetries ?? config.maxRetries),
    /** The 2xx body is read inside the attempt (JSON calls); raw and upload answers are handed over unread. */
    readsAnswer: false,
    /** The 2xx body as the attempt read it (JSON calls). */
    answer: undefined as string | undefined,
    onUploadProgress: undefined as UploadSpec['onProgress'],
  };
}

function withQuery(path: string, query: Record<string, unknown> | undefined): string {
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
