// Pure rules of recovery: how the text the service holds compares with the text a reply handed
// it, and when a failed step is worth reading back for.
import { ConflictError } from '../core/api-error.js';
import { ConnectionError } from '../core/errors.js';
import { isTransient, retryDelayMs } from '../core/retry.js';

/** The service holds text that no prefix of the reply explains. @internal */
export const DIVERGED = 'diverged';

/**
 * Compares the block's text on the service (`applied`) with the text the reply expects once every
 * handed batch is applied (`expected`). Appends apply whole and in order, so `applied` is a prefix
 * of `expected` (the rest is `missing`), or, after a replayed start, extends it (the extra is
 * `surplus`, text an earlier writer with the same key already sent).
 * @internal
 */
export function compareApplied(
  expected: string,
  applied: string,
): { missing: string; surplus: string } | typeof DIVERGED {
  if (applied.startsWith(expected)) return { missing: '', surplus: applied.slice(expected.length) };
  if (expected.startsWith(applied)) return { missing: expected.slice(applied.length), surplus: '' };
  return DIVERGED;
}

/** Takes the part of a batch the service already holds (the surplus) off its front. @internal */
export function matchSurplus(
  surplus: string,
  batch: string,
): { surplus: string; rest: string } | typeof DIVERGED {
  const matched = Math.min(surplus.length, batch.length);
  if (surplus.slice(0, matched) !== batch.slice(0, matched)) return DIVERGED;
  return { surplus: surplus.slice(matched), rest: batch.slice(matched) };
}

const isNotStreaming = (error: unknown) => ConflictError.is(error) && error.code === 'message_not_streaming';

/**
 * How long to wait before reading back after a failed step (attempt 1-based), or undefined when
 * the failure is not one a read-back can cure. A broken connection or an already completed
 * message needs no pause; a busy service gets its `Retry-After` or a backoff.
 * @internal
 */
export function recoveryDelayMs(error: unknown, attempt: number): number | undefined {
  if (!isTransient(error) && !isNotStreaming(error)) return undefined;
  if (attempt === 1 && (ConnectionError.is(error) || isNotStreaming(error))) return 0;
  return retryDelayMs(error, attempt);
}
