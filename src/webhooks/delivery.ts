// One webhook delivery, from its bytes and headers to the answer: verify, deduplicate, run,
// acknowledge. The status codes are the contract with the service's retries (PROTOCOL.md section 6):
// 2xx stops them, anything else asks for another attempt, so a 500 is answered only when a handler
// failed. `bot.handleDelivery` is the one entry; `bot.fetch` (a Web Request in, a Response out) and
// `toNodeHandler` (node:http) only read the body and write the answer around it.

import { sleep } from '../core/retry.js';
import type { WebhookEvent } from '../schemas/webhooks.js';
import type { StoreAnswer } from '../store/bot-store.js';
import {
  annotate,
  childSpan,
  endSpan,
  inSpan,
  metering,
  recordMetric,
  startServerSpan,
  type Traced,
  telemetryLoading,
} from '../telemetry.js';
import type { Bot } from './bot-types.js';
import { type Admission, type BatchOutcome, type Delivery, pending } from './lanes.js';
import { createDeadlines, type Deadlines, within } from './timers.js';
import {
  bodyBytes,
  MAX_DELIVERY_BYTES,
  type PreparedVerification,
  readHeader,
  readLimitedBody,
  type VerifiedDelivery,
  verifyPrepared,
  type WebhookBody,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationErrorCode,
} from './verify.js';

/**
 * A delivery's telemetry, when OpenTelemetry records it (its trace sampled, or a meter provider
 * registered): its spans, if traced, the delivery's own and its wait for the conversation's turn,
 * which the run ends when it starts (or the delivery, when it never runs here). @internal
 */
export interface DeliveryTrace {
  readonly delivery: Traced | undefined;
  readonly turn: Traced | undefined;
  /** When the turn began (ms, performance.now()); `undefined` once it ended. */
  since: number | undefined;
}

/** Ends a delivery's turn span (once): its wait in ms, and `outcome` when it ended without a run here. */
export function endTurn(
  trace: DeliveryTrace | undefined,
  attributes: Record<string, string | number> = {},
): void {
  if (trace?.since === undefined) return;
  const waitMs = performance.now() - trace.since;
  trace.since = undefined;
  annotate(trace.turn, { 'turn.wait_ms': Math.round(waitMs), ...attributes });
  recordMetric('turn.wait', waitMs);
  endSpan(trace.turn);
}

/** Hands a promise to the runtime so it may finish after the response (Workers' `ctx.waitUntil`). */
export type WaitUntil = (promise: Promise<unknown>) => void;

/** What a delivery needs from the bot: plain values and the functions of the files that own each step. @internal */
export interface DeliveryDeps {
  /** Set by `bot.close()`: from then on every delivery is answered 503 `shutting_down`. */
  closing: boolean;
  /** The bot's secrets and tolerance, checked and prepared once (verify.ts). */
  verification: PreparedVerification;
  ack: 'after-handler' | 'immediately';
  ackTimeoutMs: number;
  /** The runs answered 409 past `ackTimeoutMs` and still going, for their retries to wait on. */
  early: EarlyRuns;
  /** The deadlines of `ackTimeoutMs` (one timer for every delivery waiting on its handlers). */
  acks: Deadlines;
  /**
   * Claims the delivery and, once claimed, runs its handlers (in its conversation's order) and settles
   * its claim (lanes.ts); rejects only when the claim could not be made (the work never rejects).
   */
  admit(delivery: Delivery, text: string): StoreAnswer<Admission>;
  /** What the deliveries started, until it ended (`bot.idle()`). */
  work: Tracker;
  /** The bot's `waitUntil` option, for a call that passes none. */
  waitUntil: WaitUntil | undefined;
  /** Reports a failure to onError handlers or the logger; never throws. */
  report(error: unknown, event: WebhookEvent | undefined, webhookId: string | undefined): void;
  /** Logs a refused delivery; never throws. */
  warn(message: string, fields: Record<string, string>): void;
}

/**
 * The work the bot's deliveries started (a holder's drain after its own message included), until all
 * of it ended: a count and the `idle()` calls waiting for it to reach zero, no entry per delivery.
 * @internal
 */
export function createTracker() {
  let running = 0;
  let idleWaiters: (() => void)[] = [];
  const settled = () => {
    running -= 1;
    if (running > 0 || idleWaiters.length === 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const wake of waiters) wake();
  };
  return {
    /** Counts `work` until it settles; answers it. */
    track<T>(work: Promise<T>): Promise<T> {
      running += 1;
      work.then(settled, settled);
      return work;
    },
    /** Resolves once nothing counted is left. */
    async idle(): Promise<void> {
      while (running > 0) await new Promise<void>((wake) => idleWaiters.push(wake));
    },
  };
}

/** The work of a bot's deliveries (createTracker). @internal */
export type Tracker = ReturnType<typeof createTracker>;

/**
 * What a delivery is answered: its status, its headers (`content-type` and `content-length` among
 * them) and its JSON body, ready for any HTTP server to write as they are.
 */
export interface DeliveryAnswer {
  readonly status: number;
  /** Lower-case names; `content-type` is `application/json` and `content-length` counts the body's bytes. */
  readonly headers: Readonly<Record<string, string>>;
  /** JSON text. */
  readonly body: string;
}

/** Options of one call to `bot.handleDelivery`. */
export interface DeliveryOptions {
  /** Keeps the work after an early answer alive on this runtime; the bot's `waitUntil` option by default. */
  waitUntil?: WaitUntil;
}

const encoder = new TextEncoder();

function answer(status: number, value: unknown, extra?: Record<string, string>): DeliveryAnswer {
  const body = JSON.stringify(value);
  const headers = Object.freeze({
    'content-type': 'application/json',
    'content-length': String(encoder.encode(body).length),
    ...extra,
  });
  return Object.freeze({ status, headers, body });
}

const failure = (status: number, code: string, message: string, headers?: Record<string, string>) =>
  answer(status, { error: { code, message } }, headers);

// The answers that never vary, written once.
const RECEIVED = answer(200, { received: true });
const ACCEPTED = answer(202, { received: true });
const DUPLICATE = answer(200, { received: true, duplicate: true });
/** The answer to any method but POST, from every adapter. @internal */
export const NOT_POST = failure(405, 'method_not_allowed', 'webhooks are delivered with POST', {
  allow: 'POST',
});
/** The answer to a body over the limit, also from an adapter whose reader stopped there. @internal */
export const TOO_LARGE = failure(413, 'payload_too_large', `the body is over ${MAX_DELIVERY_BYTES} bytes`);
const UNREADABLE = failure(400, 'invalid_body', 'the request body could not be read');
const DEDUPE_DOWN = failure(503, 'dedupe_unavailable', 'the dedupe store failed; retry later');
// Not a 2xx, to a retry of a run still going and to a run past ackTimeoutMs alike: if the run then
// fails, its claim is released and the service's retry must come back to run it (admitOnceSettled above).
const IN_PROGRESS = failure(409, 'delivery_in_progress', 'this webhook-id is being handled; retry later', {
  'retry-after': '5',
});
const STORE_DOWN = failure(503, 'store_unavailable', 'the bot store failed; retry later', {
  'retry-after': '5',
});
// The bot is closing (bot.close): another instance, or this one restarted, takes the retry.
const SHUTTING_DOWN = failure(503, 'shutting_down', 'the bot is shutting down; retry later', {
  'retry-after': '5',
});
const HANDLER_FAILED = failure(500, 'handler_failed', 'the webhook handler failed; retry the delivery');

// 401 when the sender could not prove who it is (or proved it too long ago), 400 for a malformed delivery.
const UNAUTHENTICATED: ReadonlySet<WebhookVerificationErrorCode> = new Set([
  'no_matching_signature',
  'timestamp_too_old',
  'timestamp_too_new',
]);

// A duplicate of a delivery still in flight: most likely the service's retry of a delivery answered
// 409 (its run outlived `ackTimeoutMs`), which meets that run's claim still in flight (claims are the
// lanes' first step, lanes.ts). Rather than a 409 at once (and the next try five minutes later), it
// waits for that run, up to `ackTimeoutMs`: on the run itself when this process answered it early,
// else by admitting it again every poll (the claim answers `done` once the run was recorded, and is
// free once it failed or its process died and it expired). Then it answers 200 duplicate for a run
// that succeeded, runs the message again for one that failed, or 409 once more. Its waits keep a Node
// process alive, as the delivery they answer does.

/**
 * The runs this process answered before they ended, by webhook id, so their retries can wait on them;
 * a run leaves once it ended. @internal
 */
export const createEarlyRuns = () => new Map<string, Promise<BatchOutcome>>();

/** The runs a bot answered early. @internal */
export type EarlyRuns = ReturnType<typeof createEarlyRuns>;

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

/**
 * `step` after it failed with `failure` (a store restarting, paused or unreachable), tried again while
 * there is time before `deadline`, after 100 ms, then twice as long each time (1 s at most): an outage
 * shorter than the delivery's wait is ridden out instead of answered 503, which would push the delivery
 * to the service's next retry (5 s, then 5 min). The last failure is thrown.
 */
async function rideOut<T>(step: () => StoreAnswer<T>, deadline: number, failure: unknown): Promise<T> {
  for (let delay = 100; ; delay = Math.min(delay * 2, 1000)) {
    if (Date.now() + delay >= deadline) throw failure;
    await sleep(delay, undefined);
    try {
      return await step();
    } catch (error) {
      failure = error;
    }
  }
}

/**
 * `bot.handleDelivery` of a bot: answers one POSTed delivery from its body as it was signed and its
 * headers, under every adapter. @internal
 */
export function deliveryHandler(deps: DeliveryDeps): Bot['handleDelivery'] {
  return async (body, headers, options) => {
    const loading = telemetryLoading();
    if (loading) await loading;
    // One span per delivery, from receipt to answer, continuing the trace of a `traceparent` it carries.
    const span = startServerSpan('agent-messaging.delivery', headers, readHeader);
    const waitUntil = options?.waitUntil ?? deps.waitUntil;
    const { answer, outcome, type } = await inSpan(span, () =>
      answerDelivery(body, headers, deps, waitUntil, span),
    );
    recordMetric('deliveries', 1, { outcome, 'event.type': type });
    annotate(span, { outcome, 'http.response.status_code': answer.status });
    endSpan(span, answer.status >= 500 ? new Error(`the delivery was answered ${answer.status}`) : undefined);
    return answer;
  };
}

/**
 * `bot.fetch` of a bot: reads the Request's body (capped) and answers the Response of `handle` (its
 * `handleDelivery`), with the Workers execution context's `waitUntil` when one is given. @internal
 */
export function fetchHandler(handle: Bot['handleDelivery']): Bot['fetch'] {
  const answerOf = async (request: Request, options: DeliveryOptions | undefined) => {
    if (request.method !== 'POST') return NOT_POST;
    let body: Uint8Array | 'too_large';
    try {
      body = await readLimitedBody(request, MAX_DELIVERY_BYTES);
    } catch {
      // The body could not even be read (the client went away): nothing was verified, nothing ran.
      return UNREADABLE;
    }
    // The reader stopped at the limit: what it read is not a delivery.
    return body === 'too_large' ? TOO_LARGE : handle(body, request.headers, options);
  };
  return async (request, _env, executionCtx) => {
    const fromCtx = executionCtx?.waitUntil;
    // Workers check `this` on waitUntil, so it is called as a method of its ctx.
    const options =
      typeof fromCtx === 'function'
        ? { waitUntil: (promise: Promise<unknown>) => fromCtx.call(executionCtx, promise) }
        : undefined;
    const { status, headers, body } = await answerOf(request, options);
    return new Response(body, { status, headers });
  };
}

/** What a delivery decided, for its span and metrics: ran, duplicate, in_flight, refused or failed. */
type DeliveryOutcome = 'ran' | 'duplicate' | 'in_flight' | 'refused' | 'failed';

async function answerDelivery(
  body: WebhookBody,
  headers: WebhookHeaders,
  deps: DeliveryDeps,
  waitUntil: WaitUntil | undefined,
  span: Traced | undefined,
): Promise<{ answer: DeliveryAnswer; outcome: DeliveryOutcome; type?: string }> {
  // A closing bot starts nothing: the service retries, and another instance (or the next) answers.
  if (deps.closing) return { answer: SHUTTING_DOWN, outcome: 'refused' };
  let verified: VerifiedDelivery;
  const verifying = span && childSpan('agent-messaging.verify', {}, span);
  try {
    const bytes = bodyBytes(body);
    if (bytes.byteLength > MAX_DELIVERY_BYTES) {
      deps.warn('webhook refused', { code: 'payload_too_large', reason: 'body over the limit' });
      endSpan(verifying, new Error('the body is over the limit'));
      return { answer: TOO_LARGE, outcome: 'refused' };
    }
    // Verified at once where the runtime signs synchronously (node:crypto): only Web Crypto's
    // signature is waited for.
    const checked = verifyPrepared(bytes, headers, deps.verification);
    verified = checked instanceof Promise ? await checked : checked;
    endSpan(verifying);
  } catch (error) {
    endSpan(verifying, error);
    if (!WebhookVerificationError.is(error)) return { answer: UNREADABLE, outcome: 'refused' };
    deps.warn('webhook refused', { code: error.code, reason: error.message });
    const status = UNAUTHENTICATED.has(error.code) ? 401 : 400;
    return { answer: failure(status, error.code, error.message), outcome: 'refused' };
  }
  const { event, webhookId } = verified;
  const type = event.type;
  // The wait for the conversation's turn: ended by the run when it starts, else when the work ends.
  let trace: DeliveryTrace | undefined;
  if (span) {
    const conversationId = (event as { conversationId?: unknown }).conversationId;
    annotate(span, {
      'webhook.id': webhookId,
      'event.type': type,
      'conversation.id': typeof conversationId === 'string' ? conversationId : undefined,
    });
  }
  if (span || metering()) {
    trace = {
      delivery: span,
      turn: span && childSpan('agent-messaging.turn', {}, span),
      since: performance.now(),
    };
  }

  let admission: Admission;
  const deadline = Date.now() + deps.ackTimeoutMs;
  // Whether the delivery waited before its claim (a store outage ridden out, or the end of an earlier
  // attempt's run): its handlers then get what is left of its wait. Otherwise the bot's shared
  // deadlines, counted from the claim, one store step after the receipt.
  let waited = false;
  try {
    const delivery: Delivery = trace ? { webhookId, event, trace } : { webhookId, event };
    const admit = () => deps.admit(delivery, verified.text);
    try {
      // Awaited only when pending: on the memory store the handler has started by now.
      const first = admit();
      admission = pending(first) ? await first : first;
    } catch (error) {
      waited = true;
      admission = await rideOut(admit, deadline, error);
    }
    if (admission.claim === 'in_flight' && deps.ack !== 'immediately') {
      // Most likely the retry of a run answered 409: wait for that run's end (admitOnceSettled), all
      // within one ackTimeoutMs, a run started again included.
      waited = true;
      admission = await admitOnceSettled(webhookId, admit, deps.early, deadline);
    }
  } catch (error) {
    endTurn(trace, { outcome: 'failed' });
    deps.report(error, event, webhookId);
    return { answer: DEDUPE_DOWN, outcome: 'failed', type };
  }
  if (admission.claim !== 'claimed') {
    endTurn(trace, { outcome: admission.claim });
    return admission.claim === 'done'
      ? { answer: DUPLICATE, outcome: 'duplicate', type }
      : { answer: IN_PROGRESS, outcome: 'in_flight', type };
  }

  const { work } = admission;
  // What the claim started, counted for bot.idle() until it ended (a holder's drain included).
  deps.work.track(admission.drained);
  // A run elsewhere (another instance held the conversation) or none at all: the wait ends with it.
  if (trace) void work.then(() => endTurn(trace));
  // What must outlive the answer: the work, and the drain of the messages queued behind it when this
  // delivery's process holds its conversation (answered once its own message settled).
  const { drained } = admission;
  if (deps.ack === 'immediately') {
    // The user's choice: a 2xx at once, so a run that fails later is not retried by the service.
    waitUntil?.(drained ? Promise.all([work, drained]) : work);
    return { answer: ACCEPTED, outcome: 'ran', type };
  }
  const acks = waited ? createDeadlines(Math.max(0, deadline - Date.now()), true) : deps.acks;
  const outcome = await within(work, acks);
  if (outcome === 'timeout') {
    // Still running: not a 2xx, so the service keeps the delivery and its retry hears the outcome
    // (or runs the message again if this run fails or its process dies). The run goes on.
    deps.early.set(webhookId, work);
    // The work never rejects; a later run of the same delivery may have taken its place by its end.
    void work.then(() => deps.early.get(webhookId) === work && deps.early.delete(webhookId));
    waitUntil?.(drained ? Promise.all([work, drained]) : work);
    return { answer: IN_PROGRESS, outcome: 'in_flight', type };
  }
  // A holder goes on through its conversation's queue after its own message's answer.
  if (drained) waitUntil?.(drained);
  if (outcome === 'ok') return { answer: RECEIVED, outcome: 'ran', type };
  if (outcome === 'closed') return { answer: SHUTTING_DOWN, outcome: 'refused', type };
  return { answer: outcome === 'store_failed' ? STORE_DOWN : HANDLER_FAILED, outcome: 'failed', type };
}
