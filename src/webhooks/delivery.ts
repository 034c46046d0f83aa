// One webhook delivery, from the Request to the Response: verify, deduplicate, run, acknowledge.
// The status codes are the contract with the service's retries (PROTOCOL.md section 6): 2xx stops them,
// anything else asks for another attempt, so a 500 is answered only when a handler failed.

import type { WebhookEvent } from '../schemas/webhooks.js';
import type { LaneOutcome } from './conversation-lanes.js';
import { MAX_DELIVERY_BYTES, readLimitedBody } from './raw-input.js';
import type { Deduper } from './store-dedupe.js';
import { WebhookVerificationError, type WebhookVerificationErrorCode } from './verification-error.js';
import { verifyWebhook } from './verify.js';

/** Hands a promise to the runtime so it may finish after the response (Workers' `ctx.waitUntil`). */
export type WaitUntil = (promise: Promise<unknown>) => void;

/** What a delivery needs from the bot. @internal */
export interface DeliveryDeps {
  secrets: readonly string[];
  toleranceSec: number | undefined;
  now: (() => Date) | undefined;
  dedupe: Deduper;
  ack: 'after-handler' | 'immediately';
  ackTimeoutMs: number;
  /** Runs the event's handlers (in its conversation's order) and settles its claim; never rejects. */
  dispatch(event: WebhookEvent, webhookId: string): Promise<LaneOutcome>;
  /** Reports a failure to onError handlers or the logger; never throws. */
  report(error: unknown, event: WebhookEvent | undefined, webhookId: string | undefined): void;
  /** Logs a refused delivery; never throws. */
  warn(message: string, fields: Record<string, string>): void;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

const failure = (status: number, code: string, message: string, headers?: Record<string, string>) =>
  json(status, { error: { code, message } }, headers);

// 401 when the sender could not prove who it is (or proved it too long ago), 400 for a malformed delivery.
const UNAUTHENTICATED: ReadonlySet<WebhookVerificationErrorCode> = new Set([
  'no_matching_signature',
  'timestamp_too_old',
  'timestamp_too_new',
]);

/** Resolves with the work's outcome, or with `'timeout'` when it takes longer than `ms`. */
async function within<T>(work: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Answers one delivery. @internal */
export async function handleDelivery(
  request: Request,
  deps: DeliveryDeps,
  waitUntil: WaitUntil | undefined,
): Promise<Response> {
  if (request.method !== 'POST') {
    return failure(405, 'method_not_allowed', 'webhooks are delivered with POST', { allow: 'POST' });
  }
  let event: WebhookEvent;
  try {
    const body = await readLimitedBody(request, MAX_DELIVERY_BYTES);
    if (body === 'too_large') {
      deps.warn('webhook refused', { code: 'payload_too_large', reason: 'body over the limit' });
      return failure(413, 'payload_too_large', `the body is over ${MAX_DELIVERY_BYTES} bytes`);
    }
    event = await verifyWebhook(body, request.headers, {
      secret: deps.secrets,
      ...(deps.toleranceSec === undefined ? {} : { toleranceSec: deps.toleranceSec }),
      ...(deps.now ? { now: deps.now } : {}),
    });
  } catch (error) {
    if (!WebhookVerificationError.is(error)) {
      // The body could not even be read (the client went away): nothing was verified, nothing ran.
      return failure(400, 'invalid_body', 'the request body could not be read');
    }
    deps.warn('webhook refused', { code: error.code, reason: error.message });
    return failure(UNAUTHENTICATED.has(error.code) ? 401 : 400, error.code, error.message);
  }
  // Present and signed: verification refuses a delivery without it.
  const webhookId = (request.headers.get('webhook-id') ?? event.eventId).trim();

  let claim: string;
  try {
    claim = await deps.dedupe.claim(webhookId);
  } catch (error) {
    deps.report(error, event, webhookId);
    return failure(503, 'dedupe_unavailable', 'the dedupe store failed; retry later');
  }
  if (claim === 'done') return json(200, { received: true, duplicate: true });
  if (claim === 'in_flight') {
    // Not a 2xx: if the first attempt then fails, its claim is released and this retry must come back.
    return failure(409, 'delivery_in_progress', 'this webhook-id is being handled; retry later', {
      'retry-after': '5',
    });
  }

  const work = deps.dispatch(event, webhookId).then(async (outcome) => {
    // Not recorded as handled: forget the claim (if the store is back) so the retry runs it.
    if (outcome === 'store_failed') await deps.dedupe.release(webhookId).catch(() => undefined);
    return outcome;
  });
  const outcome = deps.ack === 'immediately' ? 'timeout' : await within(work, deps.ackTimeoutMs);
  if (outcome === 'timeout') {
    waitUntil?.(work);
    return json(202, { received: true });
  }
  if (outcome === 'ok') return json(200, { received: true });
  // Handled by the instance that holds the conversation: this delivery's part is done.
  if (outcome === 'elsewhere') return json(202, { received: true });
  if (outcome === 'store_failed') {
    return failure(503, 'store_unavailable', 'the bot store failed; retry later', { 'retry-after': '5' });
  }
  return failure(500, 'handler_failed', 'the webhook handler failed; retry the delivery');
}
