// The error a bot reports when it stops trying a message: its runs failed (or outlived maxHandlerMs)
// `maxAttempts` times, or one run went on past its signal and its grace. The message is then settled
// as handled (its delivery answered 2xx, its done mark written), so neither the service's retries nor
// another holder run it again, and its conversation moves on.
import { AgentMessagingError } from '../core/errors.js';

/**
 * A message the bot stopped trying, passed to `onError`: its delivery was answered 2xx and marked
 * done, so it is never run again. `cause` holds the last run's failure.
 *
 * @example
 * bot.onError((error) => { if (MessageGivenUpError.is(error)) console.error(error.messageId, error.attempts); });
 */
export class MessageGivenUpError extends AgentMessagingError {
  static override readonly kind: string = 'MessageGivenUpError';
  /** The webhook id of the delivery given up. */
  readonly webhookId: string;
  /** The id of its message; `undefined` for an event that carries none. */
  readonly messageId: string | undefined;
  /** How many runs of it failed, this one included. */
  readonly attempts: number;
  /** `'attempts'`: its runs failed `maxAttempts` times; `'unresponsive'`: a run went on past its signal. */
  readonly reason: 'attempts' | 'unresponsive';

  /** `cause` is the last run's failure: what it threw, or its signal's reason past maxHandlerMs. */
  constructor(
    details: Pick<MessageGivenUpError, 'webhookId' | 'messageId' | 'attempts' | 'reason'> & {
      cause: unknown;
    },
  ) {
    const what =
      details.messageId === undefined ? `Delivery ${details.webhookId}` : `Message ${details.messageId}`;
    const why =
      details.reason === 'attempts'
        ? `its runs failed ${details.attempts} times`
        : 'its run went on past its signal and the grace that followed';
    super(`${what} was given up: ${why}. It is marked handled and will not run again.`, {
      cause: details.cause,
    });
    this.webhookId = details.webhookId;
    this.messageId = details.messageId;
    this.attempts = details.attempts;
    this.reason = details.reason;
  }
}
