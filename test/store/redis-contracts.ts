// The shared BotStore contract and its compound steps, run against the Redis store on node-redis.
// The store and its peer use two clients: two connections, as two processes of one bot would.

import { createRedisStore, type RedisStore, type RedisStoreClient } from 'agent-messaging/redis';
import { describeCompoundContract } from './compound-contract.js';
import { type ContractTarget, describeBotStoreContract } from './contract.js';
import { uniquePrefix } from './redis-server.js';

// Time passes for one test's keys only: each remaining TTL shrinks by ARGV[2], and a key whose TTL
// runs out gets 1 ms left, so Redis's own expiry removes it (waited out after the call).
const ADVANCE = `
for _, key in ipairs(redis.call('KEYS', ARGV[1])) do
  local left = redis.call('PTTL', key)
  if left > 0 then redis.call('PEXPIRE', key, math.max(1, left - tonumber(ARGV[2]))) end
end`;

/** Registers both contracts for the Redis store over the two clients `clients()` answers. */
export function describeRedisContracts(name: string, clients: () => [RedisStoreClient, RedisStoreClient]) {
  const target = (): ContractTarget => {
    const opened: RedisStore[] = [];
    let prefix = '';
    return {
      async create() {
        prefix = uniquePrefix('contract');
        const [a, b] = clients();
        const store = createRedisStore({ client: a, prefix });
        const peer = createRedisStore({ client: b, prefix });
        opened.push(store, peer);
        return { store, peer };
      },
      async advance(ms) {
        await clients()[0].sendCommand(['EVAL', ADVANCE, '0', `${prefix}*`, String(ms)]);
        await new Promise((resolve) => setTimeout(resolve, 5));
      },
      async cleanup() {
        await Promise.all(opened.splice(0).map((store) => store.close()));
      },
    };
  };
  describeBotStoreContract(name, target);
  describeCompoundContract(name, target, (store) => ({ admit: store.admit, settle: store.settle }), true);
}
