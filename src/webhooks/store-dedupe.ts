// Deduplication of deliveries by webhook-id, over the bot store. The service retries a delivery with
// the same id for 5 s + 5 min + 30 min + 2 h + 5 h + 10 h (PROTOCOL.md section 6), about 17.6 hours,
// so a handled id is kept at least that long; any shorter and a late retry would run its handler again.
//
// claim   -> setIfAbsent(id, 'in_flight', in-flight TTL)   (else: get answers in_flight or done)
// complete-> set(id, 'done', 18 h)                           only after the handler succeeded
// release -> compareAndSet(id, 'in_flight', absent)          the handler failed: the retry runs it
// An in-flight claim expires on its own (a process that died mid-handler must not block the retries).

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
}

const key = (id: string) => `dedupe:${id}`;

/** Dedupe kept in a {@link BotStore}; `inFlightMs` bounds a claim whose process died. @internal */
export function storeDeduper(store: BotStore, inFlightMs: number): Deduper {
  return {
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
