// Turns user options into a checked transport configuration, once, at construction.

import * as z from 'zod/mini';
import type { ConnectionOptions, LogFields, Logger } from './options.js';
import { count, fn, parseInput } from './validate.js';

/** The default per-attempt timeout. */
const DEFAULT_TIMEOUT_MS = 30_000;
/** The default cap on one answer body: 8 MiB. */
const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** The default number of retries. */
const DEFAULT_MAX_RETRIES = 2;

/** A checked configuration for one Transport. @internal */
export type TransportConfig = ReturnType<typeof resolveConfig>;

/**
 * An environment variable, or `undefined` where `process` does not exist or reading it is not allowed
 * (Deno without `--allow-env` throws NotCapable): the SDK needs no permission but the network.
 * @internal
 */
export function readEnv(name: string): string | undefined {
  try {
    return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
  } catch {
    return undefined;
  }
}

// Credentials in the URL would be quoted by fetch's errors; the service's auth is the bearer token.
const BaseUrl = z
  .string({
    error: (issue) =>
      issue.input === undefined ? 'is required (pass baseUrl or set the AMS_BASE_URL env var)' : undefined,
  })
  .check(
    z.refine(
      (value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol) && !/[?#]/.test(value),
      { error: 'must be an absolute http or https URL without query or fragment', abort: true },
    ),
    z.refine((value) => !new URL(value).username && !new URL(value).password, {
      error: 'must not contain a user name or password',
    }),
  );

// The token is checked for presence and header-safety only: its prefix is the service's business.
const Token = z
  .string()
  .check(
    z.trim(),
    z.regex(/\S/, { error: 'must not be blank' }),
    z.regex(/^[\x21-\x7e]*$/, { error: 'must be printable ASCII without spaces' }),
  );

const LoggerOption = z.custom<Logger>(
  (value) =>
    typeof value === 'function' ||
    (typeof value === 'object' && value !== null && typeof Reflect.get(value, 'debug') === 'function'),
  { error: 'must be a function or an object with a debug method' },
);

/** The options every client takes besides its credential. @internal */
export const ConnectionOptionsSchema = z.strictObject({
  // Required once the env var has stood in for a missing one (resolveConfig).
  baseUrl: BaseUrl,
  timeoutMs: z.optional(count(1)),
  maxRetries: z.optional(count(0)),
  maxResponseBytes: z.optional(count(1)),
  fetch: z.optional(fn<ConnectionOptions['fetch']>()),
  logger: z.optional(LoggerOption),
});

/**
 * Checks the options of a client against `schema` (the connection options plus the credential, and
 * for registerAgent the per-call ones): a misspelt option (`baseURL`) is an error, not ignored. A
 * missing or blank credential, or a missing or malformed base URL, is a ValidationError naming the
 * option; the credential itself never appears in it.
 * @internal
 */
export function resolveConfig(
  options: ConnectionOptions | undefined,
  schema: z.ZodMiniType,
  credential: string,
  context: string,
) {
  // The env var stands in for a missing baseUrl; an empty one is as good as none.
  const baseUrl =
    (options as { baseUrl?: unknown } | undefined)?.baseUrl || readEnv('AMS_BASE_URL') || undefined;
  const withUrl = typeof options === 'object' && options !== null ? { ...options, baseUrl } : options;
  const opts = parseInput(schema, withUrl, context) as ConnectionOptions & Record<string, unknown>;
  const { logger } = opts;
  return {
    /** Absolute http(s) URL without a trailing slash. */
    baseUrl: new URL(opts.baseUrl as string).href.replace(/\/+$/, ''),
    /** The bearer token, or undefined for calls that need none (registration). */
    token: opts[credential] as string | undefined,
    timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxRetries: opts.maxRetries ?? DEFAULT_MAX_RETRIES,
    /** Most bytes of one answer body, after decompression. */
    maxResponseBytes: opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    fetch: opts.fetch,
    log:
      typeof logger === 'function'
        ? logger
        : logger && ((message: string, fields: LogFields) => logger.debug(message, fields)),
  };
}

/** The schema of a client's options: the connection options and its credential. @internal */
export const clientOptions = (credential: string, required: boolean) =>
  z.extend(ConnectionOptionsSchema, { [credential]: required ? Token : z.optional(Token) });
