// Input checks that run before anything is sent: bodies and ids against the shared schemas, and options.

import type * as z from 'zod/mini';
import { IdempotencyKey } from '../schemas/common.js';
import { type FieldIssue, fieldIssues, safeParse } from '../schemas/issues.js';
import { ValidationError } from './errors.js';
import type { RequestOptions } from './options.js';

/** Parses a request body with its schema, or throws a ValidationError naming each bad field. @internal */
export function parseInput<S extends z.ZodMiniType>(schema: S, value: unknown, context: string): z.output<S> {
  const result = safeParse(schema, value);
  if (result.success) return result.data;
  throw new ValidationError(fieldIssues(result.error), context);
}

/**
 * Checks a path parameter (`^cnv_` and so on) and returns it percent-encoded for the path.
 * The field is named after the parameter, such as `conversationId`.
 * @internal
 */
export function pathId(
  schema: z.ZodMiniType<string>,
  value: unknown,
  field: string,
  context: string,
): string {
  const result = safeParse(schema, value);
  if (!result.success) {
    const message =
      typeof value === 'string' ? (result.error.issues[0]?.message ?? 'is invalid') : 'must be a string';
    throw new ValidationError([{ field, message }], context);
  }
  return encodeURIComponent(result.data);
}

const REQUEST_OPTION_KEYS = new Set(['idempotencyKey', 'signal', 'timeoutMs', 'headers', 'maxRetries']);

/** Headers the SDK owns: set through their options, never through `headers`. */
const OWNED_HEADERS: Record<string, string> = {
  authorization: 'is set from the client credential',
  'idempotency-key': 'is set with the idempotencyKey option',
};

/**
 * Checks the per-call options (an unknown option name is an error: a misspelt `idempotencyKey` must
 * not silently become a random key); returns them unchanged.
 * @internal
 */
export function checkRequestOptions(options: RequestOptions | undefined, context: string): RequestOptions {
  if (options === undefined) return {};
  const issues: FieldIssue[] = [];
  if (typeof options !== 'object' || options === null) {
    throw new ValidationError([{ field: 'options', message: 'must be an object' }], context);
  }
  for (const key of Object.keys(options)) {
    if (!REQUEST_OPTION_KEYS.has(key)) {
      issues.push({
        field: key,
        message: `is not an option (known: ${[...REQUEST_OPTION_KEYS].join(', ')})`,
      });
    }
  }
  const { idempotencyKey, timeoutMs, maxRetries, signal, headers } = options;
  if (idempotencyKey !== undefined) {
    const result = safeParse(IdempotencyKey, idempotencyKey);
    if (!result.success) {
      for (const issue of result.error.issues)
        issues.push({ field: 'idempotencyKey', message: issue.message });
    }
  }
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) {
    issues.push({ field: 'timeoutMs', message: 'must be a positive integer' });
  }
  if (maxRetries !== undefined && !(Number.isInteger(maxRetries) && maxRetries >= 0)) {
    issues.push({ field: 'maxRetries', message: 'must be a non-negative integer' });
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    issues.push({ field: 'signal', message: 'must be an AbortSignal' });
  }
  if (headers !== undefined) checkHeaders(headers, issues);
  if (issues.length > 0) throw new ValidationError(issues, context);
  return options;
}

// Checked here because fetch would otherwise throw a TypeError that quotes the offending value.
function checkHeaders(headers: unknown, issues: FieldIssue[]): void {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    issues.push({ field: 'headers', message: 'must be an object of header names to strings' });
    return;
  }
  for (const [name, value] of Object.entries(headers)) {
    const owned = OWNED_HEADERS[name.toLowerCase()];
    if (owned) {
      issues.push({ field: `headers.${name}`, message: owned });
    } else if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      issues.push({ field: `headers.${name}`, message: 'is not a valid header name' });
    } else if (typeof value !== 'string' || /[\r\n\0]/.test(value)) {
      issues.push({ field: `headers.${name}`, message: 'must be a string without line breaks' });
    }
  }
}
