// The memory store's bound (maxEntries): when full it forgets what expired, then the entries written
// longest ago, down to nine tenths, so a full store does not scan itself on every write, and a claim
// its holder keeps renewing is never what goes.
import { createMemoryStore } from 'agent-messaging';
import { describe, expect, it } from 'vitest';

describe('createMemoryStore({ maxEntries })', () => {
  it('drops the entries written longest ago, down to nine tenths of the bound, after what expired', async () => {
    let clock = 0;
    const store = createMemoryStore({ maxEntries: 100, now: () => clock });
    const present = async (keys: string[]) =>
      (await Promise.all(keys.map((k) => store.get(k)))).filter((v) => v !== undefined).length;
    for (let i = 0; i < 100; i++) await store.set(`k${i}`, String(i), 1_000 + i);
    await store.set('k0', 'rewritten', 60_000); // written again: now the newest of them
    await store.set('new', 'x', 10); // full: the 10 written longest ago go (the new one is written after)
    expect(await present(['k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9', 'k10'])).toBe(0);
    expect(await present(['k0', 'k11', 'k50', 'k99', 'new'])).toBe(5);

    // What expired goes first: once it has, nothing live is dropped.
    clock = 1_049; // k11..k49 and 'new' expired
    for (let i = 0; i < 30; i++) await store.set(`m${i}`, 'x', 60_000);
    expect(await present(['k0', 'k50', 'k99', 'm0', 'm29'])).toBe(5);
    expect(await present(['k49', 'new'])).toBe(0);
  });

  it('keeps a claim in flight that is renewed while a full store drops handled ids around it', async () => {
    const store = createMemoryStore({ maxEntries: 1_000 });
    await store.setIfAbsent('dedupe:evt_live', 'in_flight', 4_500);
    for (let i = 0; i < 5_000; i++) {
      await store.set(`dedupe:evt_${i}`, 'done', 18 * 3_600_000);
      // Its holder renews it every second, as the lanes do (compareAndSet in flight to in flight).
      if (i % 100 === 0) await store.compareAndSet('dedupe:evt_live', 'in_flight', 'in_flight', 4_500);
    }
    expect(await store.get('dedupe:evt_live')).toBe('in_flight');
    // A retry of the live delivery meets its claim: it does not run again.
    expect(await store.setIfAbsent('dedupe:evt_live', 'in_flight', 4_500)).toBe(false);
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
