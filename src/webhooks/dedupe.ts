// A duplicate of a delivery still in flight: most likely the service's retry of a delivery answered
// 409 (its run outlived `ackTimeoutMs`), which meets that run's claim still in flight (claims are the
// lanes' first step, lanes.ts). Rather than a 409 at once (and the next try five minutes later), it
// waits for that run, up to `ackTimeoutMs`: on the run itself when this process answered it early,
// else by admitting it again every poll (the claim answers `done` once the run was recorded, and is
// free once it failed or its process died and it expired). Then it answers 200 duplicate for a run
// that succeeded, runs the message again for one that failed, or 409 once more. Its waits keep a Node
// process alive, as the delivery they answer does.

import { sleep } from '../core/retry.js';
import type { StoreAnswer } from '../store/bot-store.js';
import type { Admission, BatchOutcome } from './lanes.js';
import { createDeadlines, type Deadlines } from './timers.js';

/**
 * The runs this process answered before they ended, by webhook id, so their retries can wait on them;
 * a run leaves once it ended (delivery.ts). @internal
 */
export const createEarlyRuns = () => new Map<string, Promise<BatchOutcome>>();

/** The runs a bot answered early. @internal */
export type EarlyRuns = ReturnType<typeof createEarlyRuns>;

/**
 * Resolves with the work's outcome, or with `'timeout'` when it outlasts the deadlines' duration: a
 * delivery's wait for its handlers, and a retry's wait for the run it repeats. @internal
 */
export function within<T>(work: Promise<T>, deadlines: Deadlines): Promise<T | 'timeout'> {
  return new Promise((resolve, reject) => {
    const deadline = deadlines.add(resolve, 'timeout');
    const end = () => deadlines.remove(deadline);
    work.then(end, end);
    work.then(resolve, reject);
  });
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
  admit: () => StoreAnswer<Admission>,
  runs: EarlyRuns,
  deadline: number,
): Promise<Admission> {
  // How often it looks at a claim held by another process: a sixteenth of its wait, 5 to 250 ms.
  const pollMs = Math.min(250, Math.max(5, Math.floor((deadline - Date.now()) / 16)));
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return { claim: 'in_flight' };
    const run = runs.get(webhookId);
    if (run) {
      const outcome = await within(run, createDeadlines(left, true));
      if (outcome === 'timeout') return { claim: 'in_flight' };
      // Told only once its done mark is in the store: nothing to read back.
      if (outcome === 'ok') return { claim: 'done' };
      // Failed (its claim released), or of unknown outcome: the claim says what comes next.
    } else await sleep(Math.min(pollMs, left), undefined);
    const admission = await admit();
    if (admission.claim !== 'in_flight') return admission;
  }
}
