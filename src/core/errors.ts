// The error family. Every error the SDK throws is an AgentMessagingError.
// Guards check a brand as well as `instanceof`, so they hold across duplicate copies of the package.

const brand = Symbol.for('agent-messaging.error');

/** The root of every error this SDK throws. */
export class AgentMessagingError extends Error {
  override name = 'AgentMessagingError';
  readonly [brand] = true;

  /** True for any error of this SDK, even one thrown by another copy of the package. */
  static is(value: unknown): value is AgentMessagingError {
    return (
      value instanceof AgentMessagingError || (typeof value === 'object' && value !== null && brand in value)
    );
  }
}
