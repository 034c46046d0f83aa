import type * as z from 'zod/mini';
import { safeParse } from './issues.js';

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
