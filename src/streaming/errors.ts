import { AgentMessagingError } from '../core/errors.js';

// TEMPORARY stand-ins until src/core/errors.ts carries the client's classes; then these re-export them.

/** The connection broke or the stream ended before it was complete. */
export class ConnectionError extends AgentMessagingError {
  override name = 'ConnectionError';
}

/** Nothing arrived on a stream for longer than its idle timeout. */
export class TimeoutError extends AgentMessagingError {
  override name = 'TimeoutError';
}

/** The service answered something this SDK cannot read. */
export class InvalidResponseError extends AgentMessagingError {
  override name = 'InvalidResponseError';
}
