// One run of the handlers over a batch of deliveries, and what it settles: each webhook id is marked
// done only when the run succeeded (or was interrupted by a newer message, which answers instead),
// and released otherwise so the service's retry runs it again.

import type { MessageReceivedEvent, WebhookEvent } from '../schemas/webhooks.js';
import type { Deduper } from './store-dedupe.js';

/** A delivery waiting for its conversation, as it is kept in the store's queue. @internal */
export interface QueuedItem {
  webhookId: string;
  event: MessageReceivedEvent;
}

/** How a run ended for its deliveries: handled, failed (retry it), or not recorded (store down). */
export type BatchOutcome = 'ok' | 'failed' | 'store_failed';

/** Why the runtime fired a handler's signal. */
export type StopReason = 'interrupted' | 'lost' | 'expired';

const STOP_MESSAGES: Record<StopReason, string> = {
  interrupted: 'A newer message in the conversation interrupted this handler.',
  lost: "The conversation's lock was lost (the store did not renew it); another instance may take over.",
  expired: 'The handler ran past maxHandlerMs; the conversation was given up to the next message.',
};

/** The `ctx.signal.reason` for a stop: an Error whose name says which (`InterruptedError`, ...). */
export function stopError(reason: StopReason): Error {
  const error = new Error(STOP_MESSAGES[reason]);
  error.name =
    reason === 'interrupted' ? 'InterruptedError' : reason === 'lost' ? 'LockLostError' : 'TimeoutError';
  return error;
}

/** What a run needs from the bot. @internal */
export interface BatchDeps {
  /** Runs every handler for the batch (the last item is the message; all are `ctx.messages`). */
  run(items: readonly { webhookId: string; event: WebhookEvent }[], signal: AbortSignal): Promise<void>;
  dedupe: Deduper;
  report(error: unknown, event: WebhookEvent | undefined, webhookId: string | undefined): void;
}

/**
 * Runs the batch and settles each id in the dedupe store. With `deferDone`, a batch that succeeded
 * is answered `'ok'` without its done marks: the caller writes them (the lanes, in their `settle`).
 * @internal
 */
export async function runBatch(
  deps: BatchDeps,
  items: readonly { webhookId: string; event: WebhookEvent }[],
  signal: AbortSignal,
  stopped: () => StopReason | undefined,
  deferDone = false,
): Promise<BatchOutcome> {
  const last = items.at(-1);
  let ok = true;
  // The runner answers for these claims while it runs them (their delivering processes may be gone).
  const letGo = deps.dedupe.hold?.(items.map((item) => item.webhookId));
  try {
    await deps.run(items, signal);
  } catch (error) {
    ok = false;
    if (stopped() !== 'interrupted') deps.report(error, last?.event, last?.webhookId);
  }
  const stop = stopped();
  // Interrupted: the newer message is answered instead, so this one is done and never retried.
  if (stop === 'interrupted') ok = true;
  else if (stop !== undefined) {
    // A lost lock or an expired lifetime: the reply was cut, so the retry must answer in full.
    if (ok) deps.report(stopError(stop), last?.event, last?.webhookId);
    ok = false;
  }
  try {
    for (const item of items) {
      if (!ok) await deps.dedupe.release(item.webhookId);
      else if (!deferDone) await deps.dedupe.complete(item.webhookId);
    }
  } catch (error) {
    deps.report(error, last?.event, last?.webhookId);
    return 'store_failed';
  } finally {
    letGo?.();
  }
  return ok ? 'ok' : 'failed';
}
