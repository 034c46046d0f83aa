// Turns user options into a checked transport configuration, once, at construction.

import type { FieldIssue } from '../schemas/issues.js';
import { ValidationError } from './errors.js';
import {
  type ConnectionOptions,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type LogFields,
  type Logger,
} from './options.js';

/** A checked configuration for one Transport. @internal */
export interface TransportConfig {
  /** Absolute http(s) URL without a trailing slash. */
  baseUrl: string;
  /** The bearer token, or undefined for calls that need none (registration). */
  token: string | undefined;
  timeoutMs: number;
  maxRetries: number;
  /** Most bytes of one answer body, after decompression. */
  maxResponseBytes: number;
  fetch: ConnectionOptions['fetch'];
  log: ((message: string, fields: LogFields) => void) | undefined;
}

/** The env var, read without failing where `process` does not exist or env access is denied. */
function envBaseUrl(): string | undefined {
  try {
    const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
    return env?.AMS_BASE_URL || undefined;
  } catch {
    return undefined;
  }
}

const CONNECTION_OPTION_KEYS = ['baseUrl', 'timeoutMs', 'maxRetries', 'maxResponseBytes', 'fetch', 'logger'];

function checkBaseUrl(value: unknown, issues: FieldIssue[]): string {
  const raw = value ?? envBaseUrl();
  if (raw === undefined || raw === '') {
    issues.push({ field: 'baseUrl', message: 'is required (pass baseUrl or set the AMS_BASE_URL env var)' });
    return '';
  }
  let url: URL | undefined;
  if (typeof raw === 'string' && URL.canParse(raw)) url = new URL(raw);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    issues.push({
      field: 'baseUrl',
      message: 'must be an absolute http or https URL without query or fragment',
    });
    return '';
  }
  // Credentials in the URL would be quoted by fetch's errors; the service's auth is the bearer token.
  if (url.username || url.password) {
    issues.push({ field: 'baseUrl', message: 'must not contain a user name or password' });
    return '';
  }
  return url.href.replace(/\/+$/, '');
}

// The token is checked for presence and header-safety only: its prefix is the service's business.
function checkToken(
  value: unknown,
  name: string,
  required: boolean,
  issues: FieldIssue[],
): string | undefined {
  if (value === undefined && !required) return undefined;
  const token = typeof value === 'string' ? value.trim() : '';
  if (token === '') {
    issues.push({ field: name, message: 'is required and must be a non-blank string' });
  } else if (!/^[\x21-\x7e]+$/.test(token)) {
    issues.push({ field: name, message: 'must be printable ASCII without spaces' });
  }
  return token;
}

function checkCount(value: unknown, name: string, fallback: number, min: number, issues: FieldIssue[]) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > 2_147_483_647) {
    issues.push({ field: name, message: `must be an integer of at least ${min}` });
  }
  return value as number;
}

/** The debug function of a logger option. */
function toLog(logger: Logger | undefined, issues: FieldIssue[]): TransportConfig['log'] {
  if (logger === undefined) return undefined;
  if (typeof logger === 'function') return logger;
  if (logger !== null && typeof logger === 'object' && typeof logger.debug === 'function') {
    return (message, fields) => logger.debug(message, fields);
  }
  issues.push({ field: 'logger', message: 'must be a function or an object with a debug method' });
  return undefined;
}

/**
 * Checks the options of a client. A missing or blank credential, or a missing or malformed base URL,
 * is a ValidationError naming the option; the credential itself never appears in it.
 * @internal
 */
export function resolveConfig(
  options: ConnectionOptions | undefined,
  credential: { name: string; value: unknown; required: boolean },
  context: string,
  otherKeys: readonly string[] = [],
): TransportConfig {
  const issues: FieldIssue[] = [];
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new ValidationError([{ field: '', message: 'options must be an object' }], context);
  }
  const opts = options ?? {};
  // A misspelt option (`baseURL`, `maxRetry`) would otherwise be ignored without a word.
  const known = new Set([...CONNECTION_OPTION_KEYS, credential.name, ...otherKeys]);
  for (const key of Object.keys(opts)) {
    if (!known.has(key))
      issues.push({ field: key, message: `is not an option (known: ${[...known].join(', ')})` });
  }
  const token = checkToken(credential.value, credential.name, credential.required, issues);
  const baseUrl = checkBaseUrl(opts.baseUrl, issues);
  const timeoutMs = checkCount(opts.timeoutMs, 'timeoutMs', DEFAULT_TIMEOUT_MS, 1, issues);
  const maxRetries = checkCount(opts.maxRetries, 'maxRetries', DEFAULT_MAX_RETRIES, 0, issues);
  const maxResponseBytes = checkCount(
    opts.maxResponseBytes,
    'maxResponseBytes',
    DEFAULT_MAX_RESPONSE_BYTES,
    1,
    issues,
  );
  if (opts.fetch !== undefined && typeof opts.fetch !== 'function') {
    issues.push({ field: 'fetch', message: 'must be a function' });
  }
  const log = toLog(opts.logger, issues);
  if (issues.length > 0) throw new ValidationError(issues, context);
  return { baseUrl, token, timeoutMs, maxRetries, maxResponseBytes, fetch: opts.fetch, log };
}
