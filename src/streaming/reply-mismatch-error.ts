// The error of a reply whose message holds other text than the writer wrote.
import { AgentMessagingError } from '../core/errors.js';

/**
 * The message holds text (or a revision) other than what the reply wrote: another writer, or a
 * line the service applied late. The reply is not reported as a success.
 *
 * @example
 * catch (error) { if (ReplyMismatchError.is(error)) console.error(error.expectedLength, error.actualLength); }
 */
export class ReplyMismatchError extends AgentMessagingError {
  static override readonly kind: string = 'ReplyMismatchError';
  /** Characters the reply wrote. */
  readonly expectedLength: number;
  /** Characters the message holds. */
  readonly actualLength: number;

  constructor(
    messageId: string,
    expectedLength: number,
    actualLength: number,
    expectedRevision: number,
    actualRevision: number | undefined,
  ) {
    super(
      `message ${messageId} holds ${actualLength} characters (revision ${actualRevision ?? 'unknown'}) where the reply wrote ${expectedLength} (revision ${expectedRevision}): another writer, or a change the service applied late.`,
    );
    this.expectedLength = expectedLength;
    this.actualLength = actualLength;
  }
}
