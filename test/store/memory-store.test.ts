// The memory store against the shared BotStore contract, on a fake clock; its admit and settle, and
// the same steps composed from its primitives, as a custom store builds them (composeAdmit, composeSettle).

import { composeAdmit, composeSettle, createMemoryStore } from 'agent-messaging';
import { describeCompoundContract } from './compound-contract.js';
import { type ContractTarget, describeBotStoreContract } from './contract.js';

const memoryTarget = (): ContractTarget => {
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
};

describeBotStoreContract('memory store', memoryTarget);

describeCompoundContract(
  'memory store',
  memoryTarget,
  (store) => ({ admit: store.admit, settle: store.settle }),
  true,
);

// A custom store with only the primitives builds admit and settle over them.
describeCompoundContract(
  'composed from the primitives',
  memoryTarget,
  (store) => ({
    admit: (request) => composeAdmit(store, request),
    settle: (request) => composeSettle(store, request),
  }),
  false,
);
