// The contract of the two compound steps, `admit` and `settle` (a delivery's two store steps), for every
// store that has them: the memory store, the Redis store, and the primitives-composed fallback a custom
// store gets. Each case is a single-step guarantee the runtime builds on; the race cases need the
// step to be atomic, so they run only against stores that implement it natively.

import type { AdmitRequest, BotStore, SettleRequest, StoreLock } from 'agent-messaging';
import { afterEach, describe, expect, it } from 'vitest';
import type { ContractTarget } from './contract.js';

const SHORT = 5_000;
const LONG = 600_000;
const PAST_SHORT = SHORT + 1_000;

type Compound = Required<Pick<BotStore, 'admit' | 'settle'>>;

const admitting = (id: string, score: number, over: Partial<AdmitRequest> = {}): AdmitRequest => ({
  claim: { key: `dedupe:${id}`, value: 'in_flight', ttlMs: LONG },
  queue: { key: 'queue:cnv_1', member: id, score, ttlMs: LONG },
  lock: { key: 'conversation:cnv_1', ttlMs: LONG },
  ...over,
});

/** Settles `done` (ids that are also their queue members): marked done and removed. */
const settling = (lock: StoreLock, done: string[] = []): SettleRequest => ({
  lock,
  lockTtlMs: LONG,
  marks: done.map((id) => ({ key: `dedupe:${id}`, value: 'done', ttlMs: LONG })),
  settled: done,
  queue: 'queue:cnv_1',
  released: { channel: 'released:cnv_1', message: '' },
});

/** What `store` published on `channel` since this call. */
async function listen(store: BotStore, channel: string) {
  const heard: string[] = [];
  await store.subscribe(channel, (message) => heard.push(message));
  return heard;
}

/**
 * Registers the compound contract. `compound(store)` is how the steps are reached (the store's own,
 * or the fallback composed over its primitives); `atomic` adds the cases only one step can pass.
 */
export function describeCompoundContract(
  name: string,
  target: () => ContractTarget,
  compound: (store: BotStore) => Compound,
  atomic: boolean,
) {
  describe(`BotStore admit/settle: ${name}`, () => {
    let t: ContractTarget | undefined;
    const setup = async () => {
      t = target();
      const { store, peer } = await t.create();
      return { store, peer, a: compound(store), b: compound(peer) };
    };
    afterEach(async () => {
      await t?.cleanup();
      t = undefined;
    });

    it('admit on an idle conversation claims, queues, locks and reads the queue, its member kept', async () => {
      const { store, peer, a } = await setup();
      const admitted = await a.admit(admitting('evt_1', 1));
      expect(admitted).toEqual({ claimed: true, lock: expect.any(Object), queued: ['evt_1'] });
      const lock = (admitted as { lock: StoreLock }).lock;
      expect(lock.key).toBe('conversation:cnv_1');
      expect(await peer.get('dedupe:evt_1')).toBe('in_flight');
      expect(await peer.acquireLock('conversation:cnv_1', LONG)).toBeUndefined();
      expect(await peer.readQueued('queue:cnv_1')).toEqual(['evt_1']); // read, not removed
      expect(await store.releaseLock(lock)).toBe(true); // the token is a real lock token
    });

    it('admit that wins the lock answers the value of `read` with the queue; one that does not, nothing', async () => {
      const { peer, a } = await setup();
      await peer.set('order:cnv_1', '7', LONG);
      const admitted = await a.admit(admitting('evt_8', 8, { read: 'order:cnv_1' }));
      expect(admitted).toEqual({ claimed: true, lock: expect.any(Object), queued: ['evt_8'], value: '7' });
      expect(await a.admit(admitting('evt_9', 9, { read: 'order:cnv_1' }))).toEqual({
        claimed: true,
        lock: undefined,
      });
      await peer.delete('order:cnv_1');
      await peer.releaseLock((admitted as { lock: StoreLock }).lock);
      const unset = await a.admit(admitting('evt_10', 10, { read: 'order:cnv_1' }));
      expect(unset).toMatchObject({ claimed: true, queued: ['evt_8', 'evt_9', 'evt_10'] });
      expect(unset).toHaveProperty('value', undefined);
    });

    it('admit while another instance holds the lock queues the member and reads nothing', async () => {
      const { store, peer, a } = await setup();
      const held = (await peer.acquireLock('conversation:cnv_1', LONG))!;
      expect(await a.admit(admitting('evt_2', 2))).toEqual({ claimed: true, lock: undefined });
      expect(await a.admit(admitting('evt_1', 1))).toEqual({ claimed: true, lock: undefined });
      expect(await store.get('dedupe:evt_2')).toBe('in_flight');
      expect(await peer.renewLock(held, LONG)).toBe(true); // still the holder's
      expect(await peer.readQueued('queue:cnv_1')).toEqual(['evt_1', 'evt_2']);
    });

    it('admit of an id in flight or done answers its value and touches neither queue nor lock', async () => {
      const { store, peer, a } = await setup();
      await peer.set('dedupe:evt_1', 'done', LONG);
      await peer.setIfAbsent('dedupe:evt_2', 'in_flight', LONG);
      expect(await a.admit(admitting('evt_1', 1))).toEqual({ claimed: false, current: 'done' });
      expect(await a.admit(admitting('evt_2', 2))).toEqual({ claimed: false, current: 'in_flight' });
      expect(await store.get('dedupe:evt_1')).toBe('done'); // not overwritten by the refused claim
      expect(await peer.readQueued('queue:cnv_1')).toEqual([]);
      expect(await peer.acquireLock('conversation:cnv_1', LONG)).toBeDefined(); // never taken
    });

    it('admit reads what others queued before it, lowest score first; without a claim it only queues', async () => {
      const { peer, a } = await setup();
      await peer.enqueue('queue:cnv_1', 'evt_3', 3, LONG);
      await peer.enqueue('queue:cnv_1', 'evt_1', 1, LONG);
      const admitted = await a.admit(admitting('evt_2', 2, { claim: undefined }));
      expect(admitted).toMatchObject({ claimed: true, queued: ['evt_1', 'evt_2', 'evt_3'] });
      expect(await peer.get('dedupe:evt_2')).toBeUndefined();
    });

    it('with a limit, admit and settle read only the head of the queue, and keep the rest queued', async () => {
      const { peer, a } = await setup();
      await peer.enqueue('queue:cnv_1', 'evt_3', 3, LONG);
      await peer.enqueue('queue:cnv_1', 'evt_1', 1, LONG);
      const admitted = await a.admit(admitting('evt_2', 2, { limit: 1 }));
      expect(admitted).toMatchObject({ claimed: true, queued: ['evt_1'] });
      const { lock } = admitted as { lock: StoreLock };
      expect(await a.settle({ ...settling(lock, ['evt_1']), limit: 1 })).toEqual({
        outcome: 'queued',
        queued: ['evt_2'],
      });
      expect(await a.settle({ ...settling(lock, ['evt_2']), limit: 2 })).toEqual({
        outcome: 'queued',
        queued: ['evt_3'],
      });
      expect(await a.settle({ ...settling(lock, ['evt_3']), limit: 1 })).toEqual({ outcome: 'released' });
      expect(await peer.readQueued('queue:cnv_1')).toEqual([]);
    });

    it('the claim and the lock keep the TTLs admit was given', async () => {
      const { peer, a } = await setup();
      await a.admit({
        claim: { key: 'dedupe:evt_1', value: 'in_flight', ttlMs: SHORT },
        queue: { key: 'queue:cnv_1', member: 'evt_1', score: 1, ttlMs: LONG },
        lock: { key: 'conversation:cnv_1', ttlMs: SHORT },
      });
      await t!.advance(PAST_SHORT);
      expect(await peer.get('dedupe:evt_1')).toBeUndefined();
      expect(await peer.acquireLock('conversation:cnv_1', LONG)).toBeDefined();
      expect(await peer.readQueued('queue:cnv_1')).toEqual(['evt_1']); // left for the next holder
    });

    it('settle of the last member marks it done, removes it, releases the lock and publishes the release', async () => {
      const { store, peer, a } = await setup();
      const heard = await listen(peer, 'released:cnv_1');
      const { lock } = (await a.admit(admitting('evt_1', 1))) as { lock: StoreLock };
      expect(await a.settle(settling(lock, ['evt_1']))).toEqual({ outcome: 'released' });
      expect(await peer.get('dedupe:evt_1')).toBe('done');
      expect(await peer.readQueued('queue:cnv_1')).toEqual([]);
      expect(await store.releaseLock(lock)).toBe(false); // already released
      expect(await peer.acquireLock('conversation:cnv_1', LONG)).toBeDefined();
      await expect.poll(() => heard.length).toBe(1);
    });

    it('settle with members left reads them in order and keeps (and extends) the lock; nothing is published', async () => {
      const { store, peer, a, b } = await setup();
      const heard = await listen(peer, 'released:cnv_1');
      const shortLock = { lock: { key: 'conversation:cnv_1', ttlMs: SHORT } };
      const { lock } = (await a.admit(admitting('evt_1', 1, shortLock))) as { lock: StoreLock };
      await b.admit(admitting('evt_3', 3));
      await b.admit(admitting('evt_2', 2));
      expect(await a.settle(settling(lock, ['evt_1']))).toEqual({
        outcome: 'queued',
        queued: ['evt_2', 'evt_3'],
      });
      expect(await peer.get('dedupe:evt_1')).toBe('done');
      expect(await peer.get('dedupe:evt_2')).toBe('in_flight'); // only what was settled is marked
      await t!.advance(PAST_SHORT); // the read extended the lock to lockTtlMs
      expect(await peer.acquireLock('conversation:cnv_1', LONG)).toBeUndefined();
      // Settling nothing removes nothing: the queue is read again as it is.
      expect(await a.settle(settling(lock))).toEqual({ outcome: 'queued', queued: ['evt_2', 'evt_3'] });
      expect(await a.settle(settling(lock, ['evt_2', 'evt_3']))).toEqual({ outcome: 'released' });
      expect(await peer.get('dedupe:evt_3')).toBe('done');
      await expect.poll(() => heard.length).toBe(1);
      expect(await store.readQueued('queue:cnv_1')).toEqual([]);
    });

    it('settle with a lock no longer its own (expired, taken over) writes the marks and touches nothing else', async () => {
      const { store, peer, a } = await setup();
      const shortLock = { lock: { key: 'conversation:cnv_1', ttlMs: SHORT } };
      const { lock } = (await a.admit(admitting('evt_1', 1, shortLock))) as { lock: StoreLock };
      await t!.advance(PAST_SHORT);
      const taker = (await peer.acquireLock('conversation:cnv_1', LONG))!;
      await peer.enqueue('queue:cnv_1', 'evt_2', 2, LONG);
      expect(await a.settle(settling(lock, ['evt_1']))).toEqual({ outcome: 'lost' });
      expect(await store.get('dedupe:evt_1')).toBe('done'); // it did complete
      expect(await peer.renewLock(taker, LONG)).toBe(true); // the new holder's lock stands
      expect(await peer.readQueued('queue:cnv_1')).toEqual(['evt_1', 'evt_2']); // and its queue, untouched
    });

    it('settle with a forged token on a free lock is lost too: nothing removed, no release published', async () => {
      const { peer, a } = await setup();
      const heard = await listen(peer, 'released:cnv_1');
      await peer.enqueue('queue:cnv_1', 'evt_1', 1, LONG);
      const forged = { key: 'conversation:cnv_1', token: 'forged' };
      expect(await a.settle(settling(forged, ['evt_1']))).toEqual({ outcome: 'lost' });
      expect(await peer.readQueued('queue:cnv_1')).toEqual(['evt_1']);
      await peer.publish('released:cnv_1', 'witness');
      await expect.poll(() => heard).toEqual(['witness']);
    });

    if (!atomic) return;

    it('settle with members left extends the queue to queueTtlMs: a backlog outlives its last enqueue', async () => {
      const { peer, a, b } = await setup();
      const shortQueue = (id: string, score: number) => {
        const request = admitting(id, score);
        return { ...request, queue: { ...request.queue, ttlMs: SHORT } };
      };
      const { lock } = (await a.admit(shortQueue('evt_1', 1))) as { lock: StoreLock };
      await b.admit(shortQueue('evt_2', 2));
      expect(await a.settle({ ...settling(lock, ['evt_1']), queueTtlMs: LONG })).toEqual({
        outcome: 'queued',
        queued: ['evt_2'],
      });
      await t!.advance(PAST_SHORT); // past the TTL the enqueue gave, within the one settle gave
      expect(await peer.readQueued('queue:cnv_1')).toEqual(['evt_2']);
    });

    it('parallel admits of one id from two instances: exactly one claims and queues it', async () => {
      const { peer, a, b } = await setup();
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).admit(admitting('evt_1', 1))),
      );
      expect(results.filter((result) => result.claimed)).toHaveLength(1);
      expect(results.find((result) => result.claimed)).toMatchObject({ queued: ['evt_1'] });
      expect(await peer.readQueued('queue:cnv_1')).toEqual(['evt_1']);
    });

    it('admits racing a holder that settles: every member is run exactly once, none stranded', async () => {
      const { peer, a, b } = await setup();
      const ran: string[] = [];
      // A holder as the 'queue' policy runs: the first member read, settled, then the next read.
      const hold = async (step: Compound, lock: StoreLock, queued: string[]) => {
        for (let next = queued; ; ) {
          const first = next[0]!;
          ran.push(first);
          await Promise.resolve();
          const settled = await step.settle(settling(lock, [first]));
          if (settled.outcome !== 'queued') return settled.outcome;
          next = settled.queued;
        }
      };
      const ids = Array.from({ length: 40 }, (_, i) => `evt_${String(i).padStart(2, '0')}`);
      const holders = ids.map(async (id, i) => {
        const step = i % 2 ? a : b;
        const admitted = await step.admit(admitting(id, i));
        if (admitted.claimed && admitted.lock) {
          expect(await hold(step, admitted.lock, admitted.queued)).toBe('released');
        }
      });
      await Promise.all(holders);
      expect([...ran].sort()).toEqual(ids);
      expect(new Set(ran).size).toBe(ids.length);
      expect(await peer.readQueued('queue:cnv_1')).toEqual([]);
      expect(await peer.acquireLock('conversation:cnv_1', LONG)).toBeDefined(); // released at the end
    });
  });
}
