// English messages for validation issues, written to follow the field's name
// (`title: must be at most 100 characters`). zod/mini ships no messages unless a locale is set with
// z.config(), which a library must not call (it would change its user's zod), so the SDK passes this
// map to each parse it makes instead; a message a schema sets itself still wins over it.
// Only the checks the SDK's own schemas use have words here (a user's schema, such as a question's,
// is read through Standard Schema with its own messages); any other issue reads 'is not valid'.

import type * as z from 'zod/mini';

type Issue = z.core.$ZodRawIssue;

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  record: 'an object',
  null: 'null',
};

const UNITS: Record<string, [verb: string, unit: string]> = {
  string: ['be', 'character'],
  array: ['have', 'item'],
};

const quote = (value: unknown) => (typeof value === 'string' ? `'${value}'` : String(value));

/** `must be one of 'start', 'stop'` for a list of allowed values. */
function oneOf(values: readonly unknown[]): string {
  const quoted = values.map(quote);
  return quoted.length === 1 ? `must be ${quoted[0]}` : `must be one of ${quoted.join(', ')}`;
}

/** `must be at most 100 characters`, `must have at least 1 item`, `must be at least 600`. */
function sizeMessage(origin: string, limit: number | bigint, bound: string): string {
  const sized = UNITS[origin];
  if (!sized) return `must be ${bound} ${limit}`;
  if (origin === 'string' && bound === 'at least' && Number(limit) === 1) return 'must not be empty';
  const [verb, unit] = sized;
  return `must ${verb} ${bound} ${limit} ${Number(limit) === 1 ? unit : `${unit}s`}`;
}

/** Whether the schema that raised an issue is `z.int()`. */
const isInt = (inst: unknown) =>
  (inst as { _zod?: { def?: { format?: string } } } | undefined)?._zod?.def?.format === 'safeint';

/**
 * The SDK's message for a validation issue, to pass as a per-parse error map
 * (`schema.safeParse(value, { error: issueMessage })`); {@link safeParse} does that for you.
 */
export const issueMessage = (issue: Issue): string => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      // z.int() reports a non-number as expecting a number; name the integer it wants.
      if (issue.expected === 'number' && isInt(issue.inst)) return 'must be an integer';
      return `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case 'invalid_value':
      return oneOf(issue.values);
    case 'too_big':
      return sizeMessage(issue.origin, issue.maximum, issue.inclusive ? 'at most' : 'less than');
    case 'too_small':
      return sizeMessage(issue.origin, issue.minimum, issue.inclusive ? 'at least' : 'more than');
    case 'invalid_format':
      if ('prefix' in issue) return `must start with "${issue.prefix}"`;
      return `must be a valid ${issue.format}`;
    case 'unrecognized_keys':
      return `has ${issue.keys.length === 1 ? 'a field' : 'fields'} it does not know: ${issue.keys.join(', ')}`;
    case 'invalid_union': {
      // A discriminated union names the discriminator values it knows; the SDK has no other union.
      const { options } = issue as { options?: readonly unknown[] };
      return options?.length ? oneOf(options) : 'matches none of the allowed shapes';
    }
    default:
      return 'is not valid';
  }
};
