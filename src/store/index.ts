export type { BotStore, StoreAnswer, StoreLock, Unsubscribe } from './bot-store.js';
export {
  type AdmitRequest,
  type AdmitResult,
  composeAdmit,
  composeSettle,
  type SettleRequest,
  type SettleResult,
  type StorePrimitives,
} from './compound.js';
export { createMemoryStore, type MemoryStoreOptions } from './memory-store.js';
export { StoreUnavailableError } from './store-error.js';
