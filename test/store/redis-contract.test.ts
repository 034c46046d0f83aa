// The Redis store against the shared BotStore contract, on a real redis-server (one for this file).
// The store and its peer use two clients: two connections, as two processes of one bot would.

import { createRedisStore, type RedisStore } from 'agent-messaging/redis';
import { afterAll, beforeAll } from 'vitest';
import { describeCompoundContract } from './compound-contract.js';
import { type ContractTarget, describeBotStoreContract } from './contract.js';
import { connectClient, startRedis, type TestRedis, uniquePrefix } from './redis-server.js';

const ADVANCE = `
for _, key in ipairs(redis.call('KEYS', ARGV[1])) do
  local left = redis.call('PTTL', key)
  if left > 0 then redis.call('PEXPIRE', key, math.max(1, left - tonumber(ARGV[2]))) end
end`;

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

const redisTarget = (): ContractTarget => {
  const opened: RedisStore[] = [];
  let prefix = '';
  return {
    async create() {
      prefix = uniquePrefix('contract');
      const [a, b] = clients;
      const store = createRedisStore({ client: a!, prefix });
      const peer = createRedisStore({ client: b!, prefix });
      opened.push(store, peer);
      return { store, peer };
    },
    async advance(ms) {
      // Time passes for this test's keys only: each remaining TTL shrinks by `ms`, and a key whose TTL
      // runs out gets 1 ms left, so Redis's own expiry removes it (waited out here).
      await clients[0]!.eval(ADVANCE, { arguments: [`${prefix}*`, String(ms)] });
      await new Promise((resolve) => setTimeout(resolve, 5));
    },
    async cleanup() {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    },
  };
};

describeBotStoreContract('Redis store', redisTarget);
describeCompoundContract(
  'Redis store',
  redisTarget,
  (store) => ({ admit: store.admit!, settle: store.settle! }),
  true,
);
