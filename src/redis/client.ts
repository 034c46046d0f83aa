// What the Redis store needs of a client, written as the smallest shape node-redis 5 already has, so
// `createClient()` from `redis` fits as it is (docs/bot.md, "Running many instances"). Nothing here
// imports `redis`: it is an optional peer.

/** A connection the store sends commands over. node-redis 5's `RedisClientType` fits as it is. */
export interface RedisStoreClient {
  /** True once `connect()` was called and until `close()`/`destroy()`. */
  readonly isOpen: boolean;
  /**
   * Sends one command (`['SET', key, value, 'NX', 'PX', '1000']`) and answers its reply: a string,
   * a number, `null`, or an array of those. `timeout` is how long it may wait unsent while offline.
   */
  sendCommand(args: string[], options?: { timeout?: number }): Promise<unknown>;
  /** A new, not yet connected client with the same settings: the store's subscriber connection. */
  duplicate(): RedisStoreSubscriber;
}

/**
 * The dedicated subscriber connection (a connection in subscribe mode can send nothing else). As in
 * node-redis, a channel has a set of listeners: its first `subscribe` sends SUBSCRIBE, its last
 * `unsubscribe` UNSUBSCRIBE, and the client subscribes again by itself after a reconnect.
 */
export interface RedisStoreSubscriber {
  /** Opens the connection. */
  connect(): Promise<unknown>;
  /** Adds `listener` to `channel`; it gets each message published there. */
  subscribe(channel: string, listener: (message: string, channel: string) => unknown): Promise<unknown>;
  /** Removes `listener` (and the channel when it was the last one). */
  unsubscribe(channel: string, listener: (message: string, channel: string) => unknown): Promise<unknown>;
  /** Closes the connection at once. */
  destroy(): unknown;
  /** Connection errors: a client without an `error` listener would crash the process on one. */
  on(event: 'error', listener: (error: Error) => void): unknown;
}
