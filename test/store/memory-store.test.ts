// The memory store against the shared BotStore contract, on a fake clock.

import { createMemoryStore } from 'agent-messaging';
import { describeBotStoreContract } from './contract.js';

describeBotStoreContract('memory store', () => {
  let clock = 1_700_000_000_000;
  return {
    async create() {
      const store = createMemoryStore({ now: () => clock });
      return { store, peer: store }; // one process: the only instance is its own peer
    },
    async advance(ms) {
      clock += ms;
    },
    async cleanup() {},
  };
});
