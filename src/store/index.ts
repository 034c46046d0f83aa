export type { BotStore, StoreLock, Unsubscribe } from './bot-store.js';
export { createMemoryStore, type MemoryStoreOptions } from './memory-store.js';
export { StoreUnavailableError } from './store-error.js';
