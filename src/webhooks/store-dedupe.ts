// Deduplication of deliveries by webhook-id, over the bot store. The service retries a delivery with
// the same id for 5 s + 5 min + 30 min + 2 h + 5 h + 10 h (PROTOCOL.md section 6), about 17.6 hours,
// so a handled id is kept at least that long; any shorter and a late retry would run its handler again.
//
// claim   -> setIfAbsent(id, 'in_flight', in-flight TTL)   (else: get answers in_flight or done)
// renew   -> compareAndSet(id, 'in_flight', 'in_flight', in-flight TTL)   while someone alive needs it
// complete-> set(id, 'done', 18 h)                           only after the handler succeeded
// release -> compareAndSet(id, 'in_flight', absent)          the handler failed: the retry runs it
// An in-flight claim is short (the bot's lock TTL) and renewed every third of it by whoever is alive
// and answerable for it: the process that took the delivery, while it waits for its conversation or
// runs it, and the conversation's holder while it runs it. A claim whose every holder died expires
// within one TTL, so the service's next retry runs the message (a process that died mid-handler must
// not block the retries); the message itself stays queued (conversation-lanes.ts), so a later holder
// of its conversation may run it even before that retry.

import type { BotStore } from '../store/bot-store.js';
import { type ClaimResult, DEDUPE_RETENTION_MS, type DedupeStore } from './dedupe-store.js';

/** What the delivery path needs: the three steps of today's dedupe. @internal */
export interface Deduper {
  claim(id: string): Promise<ClaimResult>;
  complete(id: string): Promise<void>;
  release(id: string): Promise<void>;
  /**
   * Where another holder left the id: `'done'`, `'in_flight'`, or `undefined` (released, or never
   * claimed). Absent for the deprecated `dedupe` option, which cannot tell.
   */
  state?(id: string): Promise<'in_flight' | 'done' | undefined>;
  /**
   * Keeps the in-flight claims of `ids` alive (renewed every third of their TTL) until the returned
   * function is called; holds from several callers add up. Absent for the deprecated `dedupe` option,
   * whose claims do not expire on their own.
   */
  hold?(ids: readonly string[]): () => void;
  /**
   * The claim and the done mark as writes to the bot's own store, so the lanes fold them into their
   * `admit` and `settle` steps (one round trip each). Absent for the deprecated `dedupe` option.
   */
  writes?: DedupeWrites;
}

/** A dedupe step as a store write (a claim is set only if absent). @internal */
export interface DedupeWrite {
  key: string;
  value: string;
  ttlMs: number;
}

/** The claim and the done mark of an id, and what a refused claim's value means. @internal */
export interface DedupeWrites {
  claim(id: string): DedupeWrite;
  done(id: string): DedupeWrite;
  /** A claim refused with this value: done, or in flight (a value that vanished meanwhile too). */
  refused(current: string | undefined): 'in_flight' | 'done';
}

const key = (id: string) => `dedupe:${id}`;

/**
 * Dedupe kept in a {@link BotStore}; `inFlightMs` bounds a claim no live process holds any more.
 * `report` hears a renewal that failed (the store is down: the claim may expire, the lock then guards).
 * @internal
 */
export function storeDeduper(
  store: BotStore,
  inFlightMs: number,
  report: (error: unknown) => void = () => {},
): Deduper {
  const holds = new Map<string, number>();
  let timer: ReturnType<typeof setInterval> | undefined;
  const renewAll = () => {
    // Stopped here rather than when the last hold goes: a bot that handles each delivery within one
    // turn would otherwise start and clear an interval per delivery.
    if (holds.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
    for (const id of holds.keys()) {
      store.compareAndSet(key(id), 'in_flight', 'in_flight', inFlightMs).catch(report);
    }
  };
  const letGo = (id: string) => {
    const count = (holds.get(id) ?? 1) - 1;
    if (count > 0) holds.set(id, count);
    else holds.delete(id);
  };
  return {
    writes: {
      claim: (id) => ({ key: key(id), value: 'in_flight', ttlMs: inFlightMs }),
      done: (id) => ({ key: key(id), value: 'done', ttlMs: DEDUPE_RETENTION_MS }),
      refused: (current) => (current === 'done' ? 'done' : 'in_flight'),
    },
    hold(ids) {
      for (const id of ids) holds.set(id, (holds.get(id) ?? 0) + 1);
      if (!timer && holds.size > 0) {
        // One timer for every claim of this process; it must not keep a Node process alive on its own.
        timer = setInterval(renewAll, Math.max(1, Math.floor(inFlightMs / 3)));
        (timer as { unref?: () => void }).unref?.();
      }
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        for (const id of ids) letGo(id);
      };
    },
    async claim(id) {
      if (await store.setIfAbsent(key(id), 'in_flight', inFlightMs)) return 'claimed';
      const state = await store.get(key(id));
      if (state === 'done') return 'done';
      if (state === 'in_flight') return 'in_flight';
      // Gone between the two calls (released or expired): take it now, once.
      return (await store.setIfAbsent(key(id), 'in_flight', inFlightMs)) ? 'claimed' : 'in_flight';
    },
    async complete(id) {
      await store.set(key(id), 'done', DEDUPE_RETENTION_MS);
    },
    async release(id) {
      // Only an in-flight claim is forgotten: a 'done' written by another holder stays done.
      await store.compareAndSet(key(id), 'in_flight', undefined);
    },
    async state(id) {
      const value = await store.get(key(id));
      return value === 'done' || value === 'in_flight' ? value : undefined;
    },
  };
}

const CLAIMS: ReadonlySet<unknown> = new Set<ClaimResult>(['claimed', 'in_flight', 'done']);

/** The deprecated `dedupe` option as a {@link Deduper}: its answers are checked. @internal */
export function legacyDeduper(legacy: DedupeStore): Deduper {
  return {
    async claim(id) {
      const claim: unknown = await legacy.claim(id);
      if (!CLAIMS.has(claim)) throw new TypeError(`dedupe store claim() answered ${String(claim)}`);
      return claim as ClaimResult;
    },
    async complete(id) {
      await legacy.complete(id);
    },
    async release(id) {
      await legacy.release(id);
    },
  };
}
