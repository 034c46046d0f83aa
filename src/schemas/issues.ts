import type * as z from 'zod';

/** `content[0].text` from a zod path, the way a user would name the field. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

export interface FieldIssue {
  /** The field, as `user_ids[3]`; empty for the whole body. */
  field: string;
  /** What rule it broke, in words. */
  message: string;
}

/** The issues of a failed parse, each naming its field. */
export function fieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: fieldPath([...issue.path, key]), message: 'is not a known field' }))
      : [{ field: fieldPath(issue.path), message: issue.message }],
  );
}

/** One line that names every offending field: `title: must contain a non-whitespace character`. */
export function describeIssues(error: z.ZodError, root = 'body'): string {
  return fieldIssues(error)
    .map(({ field, message }) => `${field || root}: ${message}`)
    .join('; ');
}
