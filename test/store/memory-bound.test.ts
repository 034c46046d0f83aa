// The memory store's bound (maxEntries): when full it forgets what expired, then the entries closest
// to expiry, down to nine tenths, so a full store does not scan itself on every write.
import { createMemoryStore } from 'agent-messaging';
import { describe, expect, it } from 'vitest';

describe('createMemoryStore({ maxEntries })', () => {
  it('drops the entries closest to expiry, down to nine tenths of the bound, and keeps the rest', async () => {
    let clock = 0;
    const store = createMemoryStore({ maxEntries: 100, now: () => clock });
    // k0 expires first, k99 last; a handled id without expiry outlives them all.
    await store.set('kept', 'forever');
    for (let i = 0; i < 99; i++) await store.set(`k${i}`, String(i), 1_000 + i);
    await store.set('new', 'x', 10); // full: the 10 closest to expiry go (the new one is written after)
    const present = async (keys: string[]) =>
      (await Promise.all(keys.map((k) => store.get(k)))).filter((v) => v !== undefined).length;
    expect(await present(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9'])).toBe(0);
    expect(await present(['k10', 'k50', 'k98', 'kept', 'new'])).toBe(5);

    // What expired goes first: once it has, nothing live is dropped.
    clock = 1_049; // k10..k49 and 'new' expired
    for (let i = 0; i < 30; i++) await store.set(`m${i}`, 'x', 60_000);
    expect(await present(['k50', 'k98', 'kept', 'm0', 'm29'])).toBe(5);
    expect(await present(['k49', 'new'])).toBe(0);
  });

  it('stays within the bound under a long run of new keys, the newest kept', async () => {
    const store = createMemoryStore({ maxEntries: 1_000 });
    for (let i = 0; i < 5_000; i++) await store.setIfAbsent(`dedupe:evt_${i}`, 'done', 60_000 + i);
    const kept = await Promise.all(Array.from({ length: 5_000 }, (_, i) => store.get(`dedupe:evt_${i}`)));
    const count = kept.filter((v) => v !== undefined).length;
    expect(count).toBeLessThanOrEqual(1_000);
    expect(count).toBeGreaterThanOrEqual(900);
    expect(kept.slice(-900).every((v) => v === 'done')).toBe(true);
  });
});
