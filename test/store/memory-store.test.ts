// The memory store against the shared BotStore contract, on a fake clock; its admit and settle, and
// the fallback a store without them gets (the same steps composed from its primitives).

import { type BotStore, createMemoryStore } from 'agent-messaging';
import { composeAdmit, composeSettle } from '../../src/store/compound.js';
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
  (store) => ({ admit: store.admit!, settle: store.settle! }),
  true,
);

// A custom store with only the primitives: the runtime composes admit and settle over them.
const primitivesOnly = (store: BotStore): BotStore => ({ ...store, admit: undefined, settle: undefined });
describeCompoundContract(
  'composed from the primitives',
  memoryTarget,
  (store) => {
    const plain = primitivesOnly(store);
    return {
      admit: (request) => composeAdmit(plain, request),
      settle: (request) => composeSettle(plain, request),
    };
  },
  false,
);
