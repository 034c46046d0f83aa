// The Redis store against the shared BotStore contract, on a real redis-server (one for this file).
// The store and its peer use two clients: two connections, as two processes of one bot would.

import { createRedisStore, type RedisStore } from 'agent-messaging/redis';
import { afterAll, beforeAll } from 'vitest';
import { describeBotStoreContract } from './contract.js';
import { connectClient, startRedis, type TestRedis, uniquePrefix } from './redis-server.js';

let redis: TestRedis;
let clients: Awaited<ReturnType<typeof connectClient>>[] = [];

beforeAll(async () => {
  redis = await startRedis();
  clients = [await connectClient(redis.url), await connectClient(redis.url)];
});

afterAll(async () => {
  for (const client of clients) client.destroy();
  await redis?.stop();
});

describeBotStoreContract('Redis store', () => {
  const opened: RedisStore[] = [];
  return {
    async create() {
      const prefix = uniquePrefix('contract');
      const [a, b] = clients;
      const store = createRedisStore({ client: a!, prefix });
      const peer = createRedisStore({ client: b!, prefix });
      opened.push(store, peer);
      return { store, peer };
    },
    advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    async cleanup() {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    },
  };
});
