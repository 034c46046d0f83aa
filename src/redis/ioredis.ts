// ioredis as the Redis store's client: the store needs a few calls of node-redis 5's shape
// (client.ts), and this maps them onto ioredis. Nothing here imports ioredis; any client with these
// methods fits (ioredis 6 is tested in test/store).

import { ValidationError } from '../core/errors.js';
import type { RedisStoreClient, RedisStoreSubscriber } from './client.js';

/** The part of an ioredis client the mapping uses: `new Redis(url)` fits as it is. */
export interface IoredisLike {
  /** `'wait'` before a lazy connect, `'end'` once closed for good, else connecting or connected. */
  readonly status: string;
  /** The client's options; `enableOfflineQueue` must be `false`. */
  readonly options?: { enableOfflineQueue?: boolean };
  call(command: string, ...args: string[]): Promise<unknown>;
  duplicate(override?: { lazyConnect?: boolean }): IoredisLike;
  connect(): Promise<unknown>;
  subscribe(...channels: string[]): Promise<unknown>;
  unsubscribe(...channels: string[]): Promise<unknown>;
  disconnect(): void;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * An ioredis client as the Redis store's client. It must be made with `enableOfflineQueue: false`:
 * by default ioredis keeps the commands sent while Redis is away and runs them once it is back, after
 * the store already reported them failed (a claim or a lock nobody holds would then appear). Wait for
 * `ready` before the first delivery; the store answers a Redis that went away with
 * StoreUnavailableError within its `timeoutMs`, as with node-redis.
 *
 * @example
 * import { Redis } from 'ioredis';
 * import { createRedisStore, fromIoredis } from 'agent-messaging/redis';
 * const io = new Redis(process.env.REDIS_URL, { enableOfflineQueue: false });
 * await new Promise((resolve) => io.once('ready', resolve));
 * const store = createRedisStore({ client: fromIoredis(io), prefix: 'my-bot:' });
 */
export function fromIoredis(io: IoredisLike): RedisStoreClient {
  if (typeof io?.call !== 'function' || typeof io.duplicate !== 'function') {
    throw new ValidationError([{ field: 'client', message: 'must be an ioredis client' }], 'fromIoredis');
  }
  if (io.options?.enableOfflineQueue !== false) {
    const message =
      'must be false: ioredis would run commands queued while Redis was away after the store reported ' +
      'them failed; use new Redis(url, { enableOfflineQueue: false }) or client.duplicate({ enableOfflineQueue: false })';
    throw new ValidationError([{ field: 'client.options.enableOfflineQueue', message }], 'fromIoredis');
  }
  return {
    get isOpen() {
      return io.status !== 'wait' && io.status !== 'end';
    },
    sendCommand: ([command, ...args]) => io.call(command as string, ...args),
    duplicate: () => subscriberOf(io.duplicate({ lazyConnect: true })),
  };
}

/** The store's subscriber connection. The store subscribes once per channel, so one listener each. */
function subscriberOf(sub: IoredisLike): RedisStoreSubscriber {
  const listeners = new Map<string, (message: string, channel: string) => unknown>();
  sub.on('message', (channel, message) => listeners.get(channel)?.(message, channel));
  return {
    connect: () => sub.connect(),
    async subscribe(channel, listener) {
      listeners.set(channel, listener);
      await sub.subscribe(channel);
    },
    async unsubscribe(channel) {
      listeners.delete(channel);
      await sub.unsubscribe(channel);
    },
    destroy: () => sub.disconnect(),
    on: (event, listener) => sub.on(event, listener),
  };
}
