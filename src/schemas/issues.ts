// Parsing by schema, as every parse of the SDK and the mock does it: the one safeParse (with the SDK's
// English messages), an open union of events parsed by their `type`, and the failed parse's issues,
// each naming its field.
import * as z from 'zod/mini';
import { issueMessage } from './issue-messages.js';

// One context for every parse: zod copies it per call, so sharing it is safe.
const WITH_MESSAGES = { error: issueMessage };

/**
 * `schema.safeParse(value)` with the SDK's English messages (see {@link issueMessage}), which read
 * after the field's name. Every parse of the SDK and the mock goes through it.
 */
export function safeParse<S extends z.core.$ZodType>(
  schema: S,
  value: unknown,
): z.core.util.SafeParseResult<z.output<S>> {
  return z.safeParse(schema, value, WITH_MESSAGES);
}

/**
 * Parses an event whose `type` picks its schema. A type with no schema is checked against the
 * base shape only and passed through as it came, so a new event kind never breaks a reader;
 * the static types name the known kinds, so `switch (event.type)` narrows.
 */
export function parseByType<Known>(
  schemas: Record<string, z.core.$ZodType>,
  base: z.core.$ZodType,
  data: unknown,
): z.core.util.SafeParseResult<Known> {
  const type = typeof data === 'object' && data !== null ? (data as { type?: unknown }).type : undefined;
  const schema = typeof type === 'string' && Object.hasOwn(schemas, type) ? schemas[type] : undefined;
  return safeParse(schema ?? base, data) as z.core.util.SafeParseResult<Known>;
}

/** `content[0].text` from a zod path, the way a user would name the field. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/** One field a check refused, and why. */
export interface FieldIssue {
  /** The field, as `user_ids[3]`; empty for the whole body. */
  field: string;
  /** What rule it broke, in words. */
  message: string;
}

/** The issues of a failed parse, each naming its field. */
export function fieldIssues(error: z.core.$ZodError): FieldIssue[] {
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: fieldPath([...issue.path, key]), message: 'is not a known field' }))
      : [{ field: fieldPath(issue.path), message: issue.message }],
  );
}

/** One line that names every offending field: `title: must contain a non-whitespace character`. */
export function describeIssues(error: z.core.$ZodError, root = 'body'): string {
  return fieldIssues(error)
    .map(({ field, message }) => `${field || root}: ${message}`)
    .join('; ');
}
