// The bot store could not do what it was asked: its server went away, did not answer in time, or
// answered an error. The runtime answers the delivery 503 so the service retries it later, and marks
// nothing done: an operation that failed this way may or may not have been applied.

import { AgentMessagingError } from '../core/errors.js';

/**
 * A {@link BotStore} operation failed: the store is unreachable (a Redis that went away), slow past its
 * timeout, or refused the command. Whether the write happened is unknown, so the caller treats the
 * step as not done (a delivery answers 503 and the service's retry runs it again).
 *
 * @example
 * try { await store.get('k'); } catch (error) { if (StoreUnavailableError.is(error)) retryLater(); }
 */
export class StoreUnavailableError extends AgentMessagingError {
  static override readonly kind: string = 'StoreUnavailableError';
  /** The store method that failed, such as `acquireLock`. */
  readonly operation: string;

  constructor(operation: string, message: string, options?: ErrorOptions) {
    super(`Bot store ${operation} failed: ${message}`, options);
    this.operation = operation;
  }
}
