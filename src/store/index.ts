export type { BotStore, StoreLock, Unsubscribe } from './bot-store.js';
export type { AdmitRequest, AdmitResult, SettleRequest, SettleResult } from './compound.js';
export { createMemoryStore, type MemoryStoreOptions } from './memory-store.js';
export { StoreUnavailableError } from './store-error.js';
