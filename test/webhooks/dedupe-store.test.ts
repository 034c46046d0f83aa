import { createMemoryDedupeStore, DEDUPE_RETENTION_MS } from 'agent-messaging';
import { describe, expect, it } from 'vitest';

const RETRY_SCHEDULE_MS = (5 + 5 * 60 + 30 * 60 + 2 * 3600 + 5 * 3600 + 10 * 3600) * 1000;

describe('createMemoryDedupeStore', () => {
  it('claims a new id once, reports it in flight, then done after complete', () => {
    const store = createMemoryDedupeStore();
    expect(store.claim('evt_1')).toBe('claimed');
    expect(store.claim('evt_1')).toBe('in_flight');
    store.complete('evt_1');
    expect(store.claim('evt_1')).toBe('done');
    expect(store.claim('evt_2')).toBe('claimed');
  });

  it('lets a released id be claimed again, so a retry runs the handler', () => {
    const store = createMemoryDedupeStore();
    store.claim('evt_1');
    store.release('evt_1');
    expect(store.claim('evt_1')).toBe('claimed');
  });

  it('keeps a handled id through the whole retry schedule of the service', () => {
    let clock = 0;
    const store = createMemoryDedupeStore({ now: () => clock });
    expect(DEDUPE_RETENTION_MS).toBeGreaterThan(RETRY_SCHEDULE_MS);
    store.claim('evt_1');
    store.complete('evt_1');
    clock = RETRY_SCHEDULE_MS + 60_000;
    expect(store.claim('evt_1')).toBe('done');
    clock += DEDUPE_RETENTION_MS;
    expect(store.claim('evt_1')).toBe('claimed');
  });

  it('stays within maxEntries by forgetting the oldest handled id before any in flight', () => {
    const store = createMemoryDedupeStore({ maxEntries: 3 });
    store.claim('busy');
    for (const id of ['a', 'b']) {
      store.claim(id);
      store.complete(id);
    }
    expect(store.claim('c')).toBe('claimed');
    // 'a' was the oldest handled id: forgotten. 'busy' is older but still in flight: kept.
    expect(store.claim('busy')).toBe('in_flight');
    expect(store.claim('b')).toBe('done');
    expect(store.claim('a')).toBe('claimed');
  });
});
