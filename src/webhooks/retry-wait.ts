// A delivery whose handlers outlive `ackTimeoutMs` is answered 409 (not a 2xx), so the service keeps
// it and retries it 5 s later with the same webhook-id: the message is never lost to a run that
// fails after the answer (a throw, a store failure, a process that dies or is redeployed). The retry
// then meets the first run's claim still in flight. Rather than a 409 at once (and the next try five
// minutes later), it waits for that run, up to `ackTimeoutMs`: on the run itself when this process
// answered it early, else by admitting it again every `pollMs` (the claim answers `done` once the run
// was recorded, and is free once it failed or its process died and it expired). Then it answers 200
// duplicate for a run that succeeded, runs the message again for one that failed, or 409 once more.

import type { Admission, LaneOutcome } from './conversation-lanes.js';
import { sleep } from './lane-holder.js';

/** The runs this process answered before they ended, by webhook id, so their retries can wait on them. @internal */
export interface EarlyRuns {
  /** Keeps `work` under `webhookId` until it settles. */
  add(webhookId: string, work: Promise<LaneOutcome>): void;
  get(webhookId: string): Promise<LaneOutcome> | undefined;
}

/** A bot's {@link EarlyRuns}. @internal */
export function createEarlyRuns(): EarlyRuns {
  const runs = new Map<string, Promise<LaneOutcome>>();
  return {
    add(webhookId, work) {
      runs.set(webhookId, work);
      const forget = () => {
        if (runs.get(webhookId) === work) runs.delete(webhookId);
      };
      work.then(forget, forget);
    },
    get: (webhookId) => runs.get(webhookId),
  };
}

/** How often a retry looks at a claim held by another process: a sixteenth of its wait, 5 to 250 ms. */
export const pollInterval = (ackTimeoutMs: number) =>
  Math.min(250, Math.max(5, Math.floor(ackTimeoutMs / 16)));

/** The outcome of `work`, or `'timeout'` once `ms` passed first. */
function settledWithin(work: Promise<LaneOutcome>, ms: number): Promise<LaneOutcome | 'timeout'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(resolve, ms, 'timeout');
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Admits a delivery whose claim was in flight again once that run ended, waiting until `deadline`
 * (ms since the epoch): the admission that ended the wait (`claimed`: the run failed and freed it;
 * `done`), or `in_flight` when the run still goes at the deadline. Rejects when `admit` does.
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
    } else await sleep(Math.min(pollMs, left));
    const admission = await admit();
    if (admission.claim !== 'in_flight') return admission;
  }
}
