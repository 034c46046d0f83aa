// One contract for every BotStore: the memory store and the Redis store run these same tests
// (memory-store.test.ts, redis-store.test.ts). A store passes only if the runtime can rely on it for
// dedupe, per-conversation locks and queues, leases, counters, sessions and interrupts.

import type { BotStore } from 'agent-messaging';
import { afterEach, describe, expect, it } from 'vitest';

/** How the contract reaches one store implementation. */
export interface ContractTarget {
  /**
   * A store over an empty namespace, and a peer sharing its state as a second instance of the bot
   * would: another connection (another process) for Redis, the same store for the memory store.
   */
  create(): Promise<{ store: BotStore; peer: BotStore }>;
  /**
   * Lets `ms` of the stores' time pass: a fake clock, or for a server every key's remaining TTL cut by
   * `ms` (the server itself still expires them), so no assertion depends on how fast the machine is.
   */
  advance(ms: number): Promise<void>;
  /** Closes what `create` opened. */
  cleanup(): Promise<void>;
}

/** A TTL the tests let pass with `advance`, and one no test outlives. */
const SHORT = 5_000;
const LONG = 600_000;
const PAST_SHORT = SHORT + 1_000;

/** Subscribes and collects what arrives; `count(n)` resolves once `n` messages have arrived. */
function nextMessages(store: BotStore, channel: string, expected: number) {
  const received: string[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const subscribed = store.subscribe(channel, (message) => {
    received.push(message);
    for (const waiter of waiters) if (received.length >= waiter.n) waiter.resolve();
  });
  const count = (n: number) =>
    new Promise<string[]>((resolve) => {
      if (received.length >= n) resolve(received);
      else waiters.push({ n, resolve: () => resolve(received) });
    });
  return { subscribed, all: count(expected), count, received };
}

/** Registers the whole contract for one implementation. */
export function describeBotStoreContract(name: string, target: () => ContractTarget) {
  describe(`BotStore contract: ${name}`, () => {
    let t: ContractTarget;
    const setup = async () => {
      t = target();
      return t.create();
    };
    afterEach(async () => {
      await t?.cleanup();
    });

    describe('values', () => {
      it('setIfAbsent sets only an absent key, for every instance, until its TTL passes', async () => {
        const { store, peer } = await setup();
        expect(await store.setIfAbsent('evt_1', 'in_flight', SHORT)).toBe(true);
        expect(await store.setIfAbsent('evt_1', 'other', SHORT)).toBe(false);
        expect(await peer.setIfAbsent('evt_1', 'other', SHORT)).toBe(false);
        expect(await peer.get('evt_1')).toBe('in_flight');
        await t.advance(PAST_SHORT);
        expect(await store.get('evt_1')).toBeUndefined();
        expect(await peer.setIfAbsent('evt_1', 'again', LONG)).toBe(true);
        expect(await store.get('evt_1')).toBe('again');
      });

      it('get answers undefined for an absent key; set overwrites, with or without a TTL', async () => {
        const { store, peer } = await setup();
        expect(await store.get('missing')).toBeUndefined();
        await store.set('a', '1', SHORT);
        await store.set('b', 'forever');
        await store.set('c', 'short', SHORT);
        await store.set('c', 'kept'); // a set without a TTL drops the old TTL
        expect(await peer.get('a')).toBe('1');
        await t.advance(PAST_SHORT);
        expect(await store.get('a')).toBeUndefined();
        expect(await peer.get('b')).toBe('forever');
        expect(await peer.get('c')).toBe('kept');
        await store.set('b', 'unicode ✓ "quoted" \n line', LONG);
        expect(await peer.get('b')).toBe('unicode ✓ "quoted" \n line');
      });

      it('compareAndSet swaps only from the expected value, creates from absent, deletes to undefined', async () => {
        const { store, peer } = await setup();
        expect(await store.compareAndSet('s', 'v1', 'v2')).toBe(false); // absent is not 'v1'
        expect(await store.get('s')).toBeUndefined();
        expect(await store.compareAndSet('s', undefined, 'v1', LONG)).toBe(true);
        expect(await peer.compareAndSet('s', undefined, 'other')).toBe(false); // present now
        expect(await peer.compareAndSet('s', 'stale', 'other')).toBe(false);
        expect(await store.get('s')).toBe('v1');
        expect(await peer.compareAndSet('s', 'v1', 'v2', SHORT)).toBe(true);
        expect(await store.get('s')).toBe('v2');
        await t.advance(PAST_SHORT); // the TTL given with the swap holds
        expect(await store.get('s')).toBeUndefined();
        expect(await store.compareAndSet('s', undefined, 'v3')).toBe(true);
        expect(await store.compareAndSet('s', 'v3', undefined)).toBe(true);
        expect(await peer.get('s')).toBeUndefined();
        expect(await store.compareAndSet('s', 'v3', undefined)).toBe(false);
      });

      it('delete removes a value and nothing else of the same name (its lock and queue stay)', async () => {
        const { store, peer } = await setup();
        await store.set('k', 'v');
        const lock = await store.acquireLock('k', LONG);
        await store.enqueue('k', 'm1', 1, LONG);
        await peer.delete('k');
        await peer.delete('never-set');
        expect(await store.get('k')).toBeUndefined();
        expect(lock).toBeDefined();
        expect(await peer.acquireLock('k', LONG)).toBeUndefined();
        expect(await store.readQueued('k')).toEqual(['m1']);
      });

      it('increment counts from 1, atomically across instances, and restarts after its TTL', async () => {
        const { store, peer } = await setup();
        expect(await store.increment('attempts', SHORT)).toBe(1);
        expect(await peer.increment('attempts', SHORT)).toBe(2);
        expect(await store.get('attempts')).toBe('2');
        await t.advance(PAST_SHORT);
        expect(await store.increment('attempts', LONG)).toBe(1);
        const values = await Promise.all(
          Array.from({ length: 30 }, (_, i) => (i % 2 ? store : peer).increment('burst', LONG)),
        );
        expect([...values].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      });
    });

    describe('locks', () => {
      it('one holder at a time; the holder releases, then another may take it', async () => {
        const { store, peer } = await setup();
        const first = await store.acquireLock('cnv_1', LONG);
        expect(first?.key).toBe('cnv_1');
        expect(first?.token).toEqual(expect.any(String));
        expect(await peer.acquireLock('cnv_1', LONG)).toBeUndefined();
        expect(await store.acquireLock('cnv_1', LONG)).toBeUndefined();
        expect(await peer.acquireLock('cnv_2', LONG)).toBeDefined(); // another key is another lock
        expect(await store.releaseLock(first!)).toBe(true);
        const second = await peer.acquireLock('cnv_1', LONG);
        expect(second).toBeDefined();
        expect(second?.token).not.toBe(first?.token);
        expect(await store.releaseLock(first!)).toBe(false); // released already
      });

      it('only the token holder renews or releases; a forged token changes nothing', async () => {
        const { store, peer } = await setup();
        const lock = (await store.acquireLock('cnv_1', LONG))!;
        const forged = { key: 'cnv_1', token: `${lock.token}x` };
        expect(await peer.releaseLock(forged)).toBe(false);
        expect(await peer.renewLock(forged, LONG)).toBe(false);
        expect(await peer.acquireLock('cnv_1', LONG)).toBeUndefined();
        expect(await peer.releaseLock(lock)).toBe(true); // the token is the right, whichever instance holds it
      });

      it('a renewed lock outlives its first TTL; an expired one is lost to the next taker for good', async () => {
        const { store, peer } = await setup();
        const lock = (await store.acquireLock('cnv_1', SHORT))!;
        expect(await store.renewLock(lock, LONG)).toBe(true);
        await t.advance(PAST_SHORT);
        expect(await peer.acquireLock('cnv_1', SHORT)).toBeUndefined(); // renewed: still held
        expect(await store.renewLock(lock, SHORT)).toBe(true);
        await t.advance(PAST_SHORT);
        expect(await store.renewLock(lock, LONG)).toBe(false); // expired: renewal cannot revive it
        const taker = (await peer.acquireLock('cnv_1', LONG))!;
        expect(taker).toBeDefined();
        // The old holder can neither renew nor release the new holder's lock.
        expect(await store.renewLock(lock, LONG)).toBe(false);
        expect(await store.releaseLock(lock)).toBe(false);
        expect(await store.acquireLock('cnv_1', LONG)).toBeUndefined();
        expect(await peer.releaseLock(taker)).toBe(true);
      });
    });

    describe('queues', () => {
      it('readQueued answers every member, lowest score first, and keeps them; a member is kept once', async () => {
        const { store, peer } = await setup();
        await store.enqueue('q', 'evt_c', 3, LONG);
        await peer.enqueue('q', 'evt_a', 1, LONG);
        await store.enqueue('q', 'evt_d', 10, LONG);
        await peer.enqueue('q', 'evt_b', 2, LONG);
        await store.enqueue('q', 'evt_b', 2, LONG); // a redelivery enqueues the same member again
        await store.enqueue('other', 'evt_x', 1, LONG);
        expect(await peer.readQueued('q')).toEqual(['evt_a', 'evt_b', 'evt_c', 'evt_d']);
        // Read, not taken: a holder that dies leaves them to the next one.
        expect(await store.readQueued('q')).toEqual(['evt_a', 'evt_b', 'evt_c', 'evt_d']);
        expect(await store.readQueued('never')).toEqual([]);
        expect(await peer.readQueued('other')).toEqual(['evt_x']);
      });

      it('readQueued removes the settled members first, in the same step, and answers the rest', async () => {
        const { store, peer } = await setup();
        for (const [i, member] of ['evt_a', 'evt_b', 'evt_c'].entries())
          await store.enqueue('q', member, i, LONG);
        expect(await peer.readQueued('q', ['evt_a', 'evt_never'])).toEqual(['evt_b', 'evt_c']);
        await store.enqueue('q', 'evt_a', 0, LONG); // a retry queues a settled message again
        expect(await store.readQueued('q', ['evt_b'])).toEqual(['evt_a', 'evt_c']);
        expect(await peer.readQueued('q', ['evt_a', 'evt_c'])).toEqual([]);
        expect(await store.readQueued('q')).toEqual([]);
        await store.enqueue('q', 'evt_e', 5, LONG); // a new queue once emptied
        expect(await store.readQueued('q')).toEqual(['evt_e']);
      });

      it('scores order large sequence numbers and fractions exactly', async () => {
        const { store } = await setup();
        const scores = [1_700_000_000_002, 1_700_000_000_001, 0.5, 1_700_000_000_001.5, -3];
        for (const score of scores) await store.enqueue('q', `m${score}`, score, LONG);
        expect(await store.readQueued('q')).toEqual(
          [...scores].sort((a, b) => a - b).map((score) => `m${score}`),
        );
      });

      it('a queue left alone past its TTL is gone; each enqueue extends it', async () => {
        const { store, peer } = await setup();
        await store.enqueue('q', 'old', 1, SHORT);
        await t.advance(PAST_SHORT);
        expect(await peer.readQueued('q')).toEqual([]);
        await store.enqueue('q2', 'first', 1, SHORT);
        await store.enqueue('q2', 'second', 2, LONG);
        await t.advance(PAST_SHORT);
        expect(await peer.readQueued('q2')).toEqual(['first', 'second']);
      });

      it('a member enqueued while another instance reads and removes is either read or still queued, never lost', async () => {
        const { store, peer } = await setup();
        const seen = new Set<string>();
        const writes = Array.from({ length: 40 }, (_, i) => store.enqueue('q', `m${i}`, i, LONG));
        // Each reader removes what it has seen so far, as a holder removes what it settled.
        const reads = Array.from({ length: 10 }, async () => {
          for (const member of await peer.readQueued('q', [...seen])) seen.add(member);
        });
        await Promise.all([...writes, ...reads]);
        for (const member of await store.readQueued('q', [...seen])) seen.add(member);
        expect([...seen].sort()).toEqual(Array.from({ length: 40 }, (_, i) => `m${i}`).sort());
        expect(await store.readQueued('q', [...seen])).toEqual([]);
      });
    });

    describe('publish / subscribe', () => {
      it('a message reaches every subscriber of its channel, in order, from any instance', async () => {
        const { store, peer } = await setup();
        const onPeer = nextMessages(peer, 'interrupt:cnv_1', 3);
        const onStore = nextMessages(store, 'interrupt:cnv_1', 3);
        const elsewhere = nextMessages(peer, 'interrupt:cnv_2', 1);
        await Promise.all([onPeer.subscribed, onStore.subscribed, elsewhere.subscribed]);
        await store.publish('interrupt:cnv_1', 'evt_1');
        await store.publish('interrupt:cnv_1', 'evt_2');
        await peer.publish('interrupt:cnv_1', 'evt_3');
        expect(await onPeer.all).toEqual(['evt_1', 'evt_2', 'evt_3']);
        expect(await onStore.all).toEqual(['evt_1', 'evt_2', 'evt_3']);
        await peer.publish('interrupt:cnv_2', 'done');
        expect(await elsewhere.all).toEqual(['done']); // and nothing of cnv_1's
      });

      it('each subscription is its own, even for one function; unsubscribe stops only it', async () => {
        const { store, peer } = await setup();
        const seen: string[] = [];
        const listener = (message: string) => seen.push(message);
        const first = await peer.subscribe('ch', listener);
        await peer.subscribe('ch', listener);
        const witness = nextMessages(peer, 'ch', 2);
        await witness.subscribed;
        await store.publish('ch', 'one');
        await witness.count(1); // delivered: every subscription of this instance had it in one dispatch
        await first();
        await first(); // twice is harmless
        await store.publish('ch', 'two');
        // The witness got 'two', so the remaining subscription got it in the same dispatch.
        expect(await witness.all).toEqual(['one', 'two']);
        expect(seen).toEqual(['one', 'one', 'two']);
      });

      it('the last unsubscribe ends the channel; a new subscribe starts from then on', async () => {
        const { store, peer } = await setup();
        const seen: string[] = [];
        const stop = await peer.subscribe('ch', (message) => seen.push(message));
        await stop();
        await store.publish('ch', 'unheard');
        const again = nextMessages(peer, 'ch', 1);
        await again.subscribed;
        await store.publish('ch', 'heard');
        expect(await again.all).toEqual(['heard']);
        expect(seen).toEqual([]);
        await store.publish('nobody-listens', 'fine');
      });
    });

    describe('races between instances', () => {
      it('many parallel setIfAbsent on one key: exactly one wins', async () => {
        const { store, peer } = await setup();
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) => (i % 2 ? store : peer).setIfAbsent('evt_race', `w${i}`, LONG)),
        );
        const winners = results.flatMap((won, i) => (won ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(await store.get('evt_race')).toBe(`w${winners[0]}`);
      });

      it('many parallel acquireLock on one key: exactly one holds it', async () => {
        const { store, peer } = await setup();
        const locks = await Promise.all(
          Array.from({ length: 50 }, (_, i) => (i % 2 ? store : peer).acquireLock('cnv_race', LONG)),
        );
        const held = locks.filter((lock) => lock !== undefined);
        expect(held).toHaveLength(1);
        expect(await store.releaseLock(held[0]!)).toBe(true);
      });

      it('many parallel compareAndSet from one value: exactly one swaps, no update lost', async () => {
        const { store, peer } = await setup();
        await store.set('session', 'v0');
        const results = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            (i % 2 ? store : peer).compareAndSet('session', 'v0', `v${i + 1}`),
          ),
        );
        const winners = results.flatMap((won, i) => (won ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(await peer.get('session')).toBe(`v${winners[0]! + 1}`);
      });
    });
  });
}
