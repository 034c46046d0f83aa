// The Redis store on node-redis against the shared BotStore contract, on a real redis-server (one for
// this file).

import { afterAll, beforeAll } from 'vitest';
import { describeRedisContracts } from './redis-contracts.js';
import { connectClient, startRedis, type TestRedis } from './redis-server.js';

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

describeRedisContracts('Redis store', () => [clients[0]!, clients[1]!]);
