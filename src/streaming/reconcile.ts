// Pure rules of recovery: when a failed step is worth reading back for, and the error for a message
// that holds other text than the reply wrote.
import { ConflictError } from '../core/api-error.js';
import { AgentMessagingError, ConnectionError, InvalidResponseError, TimeoutError } from '../core/errors.js';
import { isTransient, retryDelayMs } from '../core/retry.js';

/** Whether a failed step found the message no longer streaming (completed meanwhile). @internal */
export const isNotStreaming = (error: unknown) =>
  ConflictError.is(error) && error.code === 'message_not_streaming';

/**
 * How long to wait before reading back after a failed step (attempt 1-based), or undefined when
 * the failure is not one a read-back can cure. A broken, stalled or untrustworthy stream, or an
 * already completed message, needs no pause; a busy service gets its `Retry-After` or a backoff.
 * @internal
 */
export function recoveryDelayMs(error: unknown, attempt: number): number | undefined {
  const streamGone = ConnectionError.is(error) || TimeoutError.is(error) || InvalidResponseError.is(error);
  if (attempt === 1 && (streamGone || isNotStreaming(error))) return 0;
  if (!isTransient(error) && !isNotStreaming(error)) return undefined;
  return retryDelayMs(error, attempt);
}

/**
 * The message holds text (or a revision) other than what the reply wrote: another writer, or a
 * line the service applied late. The reply is not reported as a success.
 *
 * @example
 * catch (error) { if (ReplyMismatchError.is(error)) console.error(error.expectedLength, error.actualLength); }
 */
export class ReplyMismatchError extends AgentMessagingError {
  static override readonly kind: string = 'ReplyMismatchError';

  constructor(
    messageId: string,
    /** Characters the reply wrote. */
    readonly expectedLength: number,
    /** Characters the message holds. */
    readonly actualLength: number,
    expectedRevision: number,
    actualRevision: number | undefined,
  ) {
    super(
      `message ${messageId} holds ${actualLength} characters (revision ${actualRevision ?? 'unknown'}) where the reply wrote ${expectedLength} (revision ${expectedRevision}): another writer, or a change the service applied late.`,
    );
  }
}
