// The options users pass: per call (RequestOptions) and per client (ClientOptions).

/** Fields of one debug line; never credentials, never bodies. */
export type LogFields = Record<string, string | number | boolean | undefined>;

/** Where debug lines go: an object with `debug`, such as `console` or a pino logger, or a function. */
export type Logger =
  | { debug(message: string, fields: LogFields): void }
  | ((message: string, fields: LogFields) => void);

/**
 * The last argument of every method.
 *
 * @example
 * await client.messages.send(cnv, { text: 'Hi' }, { idempotencyKey: idempotencyKeyFor(event.eventId), signal });
 */
export interface RequestOptions {
  /** `Idempotency-Key` to send (8 to 255 printable ASCII characters); generated for the create calls when absent. */
  idempotencyKey?: string;
  /** Ends the call, its retries and their backoff sleeps, with a RequestAbortedError. */
  signal?: AbortSignal;
  /** Per-attempt timeout in milliseconds; defaults to the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
  /** Retries for this call; defaults to the client's `maxRetries`. */
  maxRetries?: number;
}

/** The options shared by both clients and `registerAgent`, besides the credential. */
export interface ConnectionOptions {
  /**
   * The service's address, such as `https://ams.example.com`; defaults to the env var `AMS_BASE_URL`.
   * @example 'http://127.0.0.1:4010'
   */
  baseUrl?: string;
  /**
   * Per-attempt timeout in milliseconds (default 30000).
   * @example 10_000
   */
  timeoutMs?: number;
  /**
   * Retries of a call that is safe to repeat (default 2).
   * @example 0
   */
  maxRetries?: number;
  /**
   * Most bytes of one answer body, after decompression (default 8 MiB): a larger answer, or a
   * compressed one that inflates beyond it, is an InvalidResponseError and is not read further.
   * @example 32 * 1024 * 1024
   */
  maxResponseBytes?: number;
  /**
   * The `fetch` to use; defaults to `globalThis.fetch`, looked up on every call.
   * @example fetch: (input, init) => myTracedFetch(input, init)
   */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /**
   * Receives one debug line per attempt (method, path, status, attempt, request id) and per retry.
   * @example logger: console
   */
  logger?: Logger;
}

/** Options of `new AgentClient()`. */
export interface AgentClientOptions extends ConnectionOptions {
  /**
   * The agent token returned once by `registerAgent`.
   * @example apiKey: process.env.AMS_API_KEY
   */
  apiKey: string;
}

/** Options of `new UserClient()`. */
export interface UserClientOptions extends ConnectionOptions {
  /**
   * The user's session token.
   * @example sessionToken: session.token
   */
  sessionToken: string;
}
