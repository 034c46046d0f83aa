// Deduplication of deliveries by webhook-id, over the bot store. The service retries a delivery with
// the same id for 5 s + 5 min + 30 min + 2 h + 5 h + 10 h (PROTOCOL.md section 6), about 17.6 hours,
// so a handled id is kept at least that long; any shorter and a late retry would run its handler again.
//
// claim   -> setIfAbsent(id, 'in_flight', in-flight TTL), folded into the lanes' admit
// renew   -> compareAndSet(id, 'in_flight', 'in_flight', in-flight TTL)   while someone alive needs it
// done    -> set(id, 'done', 18 h), folded into the lanes' settle, only after the handler succeeded
// release -> compareAndSet(id, 'in_flight', absent)          the handler failed: the retry runs it
// An in-flight claim is short (the bot's lock TTL) and renewed every third of it by whoever is alive
// and answerable for it: the process that took the delivery, while it waits for its conversation or
// runs it, and the conversation's holder while it runs it. A claim whose every holder died expires
// within one TTL, so the service's next retry runs the message (a process that died mid-handler must
// not block the retries); the message itself stays queued (lanes.ts), so a later holder of its
// conversation may run it even before that retry.
//
// A retry of a delivery answered 409 (its run outlived `ackTimeoutMs`) meets that run's claim still in
// flight. Rather than a 409 at once (and the next try five minutes later), it waits for that run, up
// to `ackTimeoutMs`: on the run itself when this process answered it early, else by admitting it again
// every poll (the claim answers `done` once the run was recorded, and is free once it failed or its
// process died and it expired). Then it answers 200 duplicate for a run that succeeded, runs the
// message again for one that failed, or 409 once more.

import { sleep } from '../core/retry.js';
import type { BotStore } from '../store/bot-store.js';
import type { Admission, BatchOutcome } from './lanes.js';
import { createDeadlines } from './timers.js';

/** Where a delivery's claim stands: taken by this call, being handled, or handled. */
export type ClaimResult = 'claimed' | 'in_flight' | 'done';

/** The whole retry schedule of the service (17 h 35 min 5 s) and some slack for clock skew. */
export const DEDUPE_RETENTION_MS = 18 * 60 * 60 * 1000;

/** A dedupe step as a store write (a claim is set only if absent). @internal */
export interface DedupeWrite {
  key: string;
  value: string;
  ttlMs: number;
}

const key = (id: string) => `dedupe:${id}`;

/** The claim of `id`, alive `inFlightMs` unless renewed. @internal */
export const claimWrite = (id: string, inFlightMs: number): DedupeWrite => ({
  key: key(id),
  value: 'in_flight',
  ttlMs: inFlightMs,
});

/** The done mark of `id`, kept for the whole retry schedule. @internal */
export const doneWrite = (id: string): DedupeWrite => ({
  key: key(id),
  value: 'done',
  ttlMs: DEDUPE_RETENTION_MS,
});

/** What a refused claim's value means: done, or in flight (a value that vanished meanwhile too). @internal */
export const refusedClaim = (current: string | undefined): 'in_flight' | 'done' =>
  current === 'done' ? 'done' : 'in_flight';

/** Forgets an in-flight claim so the retry runs it; a 'done' written by another holder stays done. @internal */
export async function releaseClaim(store: BotStore, id: string): Promise<void> {
  await store.compareAndSet(key(id), 'in_flight', undefined);
}

/** Where another holder left the id: `'done'`, `'in_flight'`, or `undefined` (released, never claimed). @internal */
export async function claimState(store: BotStore, id: string): Promise<'in_flight' | 'done' | undefined> {
  const value = await store.get(key(id));
  return value === 'done' || value === 'in_flight' ? value : undefined;
}

/** Writes marks one by one (a run of no conversation, or a holder that lost its lock after a run). @internal */
export async function writeMarks(store: BotStore, marks: readonly DedupeWrite[]): Promise<void> {
  for (const mark of marks) await store.set(mark.key, mark.value, mark.ttlMs);
}

/**
 * Keeps the in-flight claims of ids alive, renewed every third of `inFlightMs` until the function
 * `hold` answers is called; holds from several callers add up. `report` hears a renewal that failed
 * (the store is down: the claim may expire, the lock then guards). @internal
 */
export function createClaimHolds(store: BotStore, inFlightMs: number, report: (error: unknown) => void) {
  const holds = new Map<string, number>();
  // One renewal for every claim of this process, which never keeps a Node process alive on its own.
  const renewals = createDeadlines(Math.max(1, Math.floor(inFlightMs / 3)), false);
  let armed = false;
  const renewAll = () => {
    armed = holds.size > 0;
    if (!armed) return;
    for (const id of holds.keys()) {
      store.compareAndSet(key(id), 'in_flight', 'in_flight', inFlightMs).catch(report);
    }
    renewals.add(renewAll, undefined);
  };
  const letGo = (id: string) => {
    const count = (holds.get(id) ?? 1) - 1;
    if (count > 0) holds.set(id, count);
    else holds.delete(id);
  };
  return (ids: readonly string[]): (() => void) => {
    for (const id of ids) holds.set(id, (holds.get(id) ?? 0) + 1);
    // Left armed when the last hold goes: a bot that handles each delivery within one turn would
    // otherwise add and remove a renewal per delivery.
    if (!armed) {
      armed = true;
      renewals.add(renewAll, undefined);
    }
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      for (const id of ids) letGo(id);
    };
  };
}

/** The runs this process answered before they ended, by webhook id, so their retries can wait on them. @internal */
export function createEarlyRuns() {
  const runs = new Map<string, Promise<BatchOutcome>>();
  return {
    /** Keeps `work` under `webhookId` until it settles. */
    add(webhookId: string, work: Promise<BatchOutcome>) {
      runs.set(webhookId, work);
      const forget = () => {
        if (runs.get(webhookId) === work) runs.delete(webhookId);
      };
      work.then(forget, forget);
    },
    get: (webhookId: string) => runs.get(webhookId),
  };
}

/** The runs a bot answered early. @internal */
export type EarlyRuns = ReturnType<typeof createEarlyRuns>;

/** How often a retry looks at a claim held by another process: a sixteenth of its wait, 5 to 250 ms. */
export const pollInterval = (ackTimeoutMs: number) =>
  Math.min(250, Math.max(5, Math.floor(ackTimeoutMs / 16)));

/** The outcome of `work`, or `'timeout'` once `ms` passed first. */
async function settledWithin(work: Promise<BatchOutcome>, ms: number): Promise<BatchOutcome | 'timeout'> {
  const stop = new AbortController();
  const timeout = sleep(ms, stop.signal).then(
    () => 'timeout' as const,
    () => 'timeout' as const,
  );
  try {
    return await Promise.race([work, timeout]);
  } finally {
    stop.abort();
  }
}

/**
 * Admits a delivery whose claim was in flight again once that run ended, waiting until `deadline`
 * (ms since the epoch): the admission that ended the wait (`claimed`: the run failed and freed it;
 * `done`), or `in_flight` when the run still goes at the deadline. Its waits keep a Node process
 * alive, as the delivery they answer does. Rejects when `admit` does.
 * @internal
 */
export async function admitOnceSettled(
  webhookId: string,
  admit: () => Promise<Admission>,
  runs: EarlyRuns,
  deadline: number,
  pollMs: number,
): Promise<Admission> {
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return { claim: 'in_flight' };
    const run = runs.get(webhookId);
    if (run) {
      const outcome = await settledWithin(run, left);
      if (outcome === 'timeout') return { claim: 'in_flight' };
      // Told only once its done mark is in the store: nothing to read back.
      if (outcome === 'ok') return { claim: 'done' };
      // Failed (its claim released), or of unknown outcome: the claim says what comes next.
    } else await sleep(Math.min(pollMs, left), undefined);
    const admission = await admit();
    if (admission.claim !== 'in_flight') return admission;
  }
}
