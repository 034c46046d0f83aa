/**
 * `agent-messaging/redis`: the bot store on Redis, for a bot that runs as several instances.
 * Needs the `redis` package (node-redis 5), an optional peer dependency of `agent-messaging`.
 *
 * @example
 * import { createClient } from 'redis';
 * import { createRedisStore } from 'agent-messaging/redis';
 * const client = await createClient({ url: process.env.REDIS_URL }).connect();
 * const store = createRedisStore({ client, prefix: 'my-bot:' });
 *
 * @packageDocumentation
 */

export { StoreUnavailableError } from '../store/store-error.js';
export type { RedisStoreClient, RedisStoreSubscriber } from './client.js';
export { createRedisStore, type RedisStore, type RedisStoreOptions } from './redis-store.js';
