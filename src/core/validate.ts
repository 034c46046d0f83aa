// Input checks that run before anything is sent: bodies and ids against the shared schemas, and options.

import * as z from 'zod/mini';
import { IdempotencyKey } from '../schemas/common.js';
import { fieldIssues, safeParse } from '../schemas/issues.js';
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

/** Headers the SDK owns: set through their options, never through `headers`. */
const OWNED_HEADERS: Record<string, string> = {
  authorization: 'is set from the client credential',
  'idempotency-key': 'is set with the idempotencyKey option',
};

// Checked here because fetch would otherwise throw a TypeError that quotes the offending value.
const HeaderMap = z.record(z.string(), z.string()).check(
  z.superRefine((headers, ctx) => {
    for (const [name, value] of Object.entries(headers)) {
      const message =
        OWNED_HEADERS[name.toLowerCase()] ??
        (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)
          ? 'is not a valid header name'
          : /[\r\n\0]/.test(value)
            ? 'must be a string without line breaks'
            : undefined);
      if (message) ctx.issues.push({ code: 'custom', path: [name], message, input: value });
    }
  }),
);

/** A whole number of at least `min` that fits a timer. @internal */
export const count = (min: number) => z.int().check(z.minimum(min), z.maximum(2_147_483_647));

/** A string with a non-whitespace character. @internal */
export const text = () => z.string().check(z.regex(/\S/, { error: 'must be a non-empty string' }));

/** A value that must be a function. @internal */
export const fn = <T>() =>
  z.custom<T>((value) => typeof value === 'function', { error: 'must be a function' });

/** The per-call options; a key it does not know (a misspelt `idempotencyKey`) is an error. @internal */
export const RequestOptionsSchema = z.strictObject({
  idempotencyKey: z.optional(IdempotencyKey),
  signal: z.optional(
    z.custom<AbortSignal>((value) => value instanceof AbortSignal, { error: 'must be an AbortSignal' }),
  ),
  timeoutMs: z.optional(count(1)),
  headers: z.optional(HeaderMap),
  maxRetries: z.optional(count(0)),
});

/**
 * Checks the per-call options (an unknown option name is an error: a misspelt `idempotencyKey` must
 * not silently become a random key); returns them unchanged.
 * @internal
 */
export function checkRequestOptions(options: RequestOptions | undefined, context: string): RequestOptions {
  if (options === undefined) return {};
  parseInput(RequestOptionsSchema, options, context);
  return options;
}
