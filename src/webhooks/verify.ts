// Verifying a delivery (PROTOCOL.md section 6, Standard Webhooks): the signature over the raw bytes
// first, then the clock, then the JSON and its shape. node:crypto where the runtime has it, Web Crypto
// elsewhere (hmac.ts); each secret's key is prepared once, not per delivery. The event is checked by
// its schema (src/schemas/webhooks.ts), which names the first bad field.

import { parseWebhookEvent, type WebhookEvent } from '../schemas/webhooks.js';
import { type Signer, timingSafeEqual } from './hmac.js';
import { bodyBytes, readHeader, type WebhookBody, type WebhookHeaders } from './raw-input.js';
import { secretProblem, signerOf } from './signature.js';
import { WebhookVerificationError } from './verification-error.js';

/** Options of {@link verifyWebhook}. */
export interface VerifyWebhookOptions {
  /** The agent's webhook secret (`whsec_...`), or several while rotating: any one may match. */
  secret: string | readonly string[];
  /** How far `webhook-timestamp` may be from the clock, in seconds; 300 by default. */
  toleranceSec?: number;
  /** The clock, a function answering a valid Date; `new Date()` by default. */
  now?: () => Date;
}

/** Tolerance of Standard Webhooks receivers, in seconds. */
export const DEFAULT_TOLERANCE_SEC = 300;

/** Each problem of a secret option, by field (`secret`, or `secret[1]` in a list); none when all are good. @internal */
export function secretIssues(secret: unknown, field: string): { field: string; message: string }[] {
  const secrets: unknown[] = Array.isArray(secret) ? secret : [secret];
  if (secrets.length === 0) return [{ field, message: 'must hold at least one webhook secret' }];
  return secrets.flatMap((item, index) => {
    const message = secretProblem(item);
    if (message === undefined) return [];
    return [{ field: secrets.length > 1 ? `${field}[${index}]` : field, message }];
  });
}

/** The prepared signer of every secret; the secrets themselves never reach an error message. */
function decodeSecrets(secret: unknown): Signer[] {
  const [issue] = secretIssues(secret, 'secret');
  if (issue) throw new WebhookVerificationError('invalid_secret', `${issue.field}: ${issue.message}`);
  const secrets: unknown[] = Array.isArray(secret) ? secret : [secret];
  return secrets.map((item) => signerOf(item as string) as Signer);
}

/** The clock's reading in Unix seconds; a clock that is not a function answering a valid Date is refused. */
function clockSeconds(now: unknown): number {
  let ms = Number.NaN;
  try {
    const date: unknown = typeof now === 'function' ? now() : undefined;
    // The tag, not instanceof, so a Date of another realm (a vm context, an iframe) is one too.
    if (Object.prototype.toString.call(date) === '[object Date]') ms = Date.prototype.getTime.call(date);
  } catch {
    // A clock that throws is refused below like any other broken clock.
  }
  // NaN compares false with everything: it would pass every timestamp through the tolerance checks.
  if (!Number.isFinite(ms)) {
    throw new WebhookVerificationError('invalid_options', 'now: expected a function answering a valid Date');
  }
  return Math.floor(ms / 1000);
}

function readTimestamp(raw: string, now: number, toleranceSec: number): number {
  if (!/^\d{1,16}$/.test(raw.trim())) {
    throw new WebhookVerificationError(
      'invalid_timestamp',
      'webhook-timestamp: expected a whole number of Unix seconds',
    );
  }
  const timestamp = Number(raw.trim());
  if (now - timestamp > toleranceSec) {
    throw new WebhookVerificationError(
      'timestamp_too_old',
      `webhook-timestamp: ${now - timestamp} s in the past, more than the tolerance of ${toleranceSec} s`,
    );
  }
  if (timestamp - now > toleranceSec) {
    // A millisecond timestamp is ~1000x now: say so, it is the usual mistake of a hand-rolled sender.
    const hint = timestamp > now * 100 ? ' (it looks like milliseconds; Standard Webhooks uses seconds)' : '';
    throw new WebhookVerificationError(
      'timestamp_too_new',
      `webhook-timestamp: ${timestamp - now} s in the future, more than the tolerance of ${toleranceSec} s${hint}`,
    );
  }
  return timestamp;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseJson(bytes: Uint8Array): { text: string; value: unknown } {
  try {
    const text = utf8.decode(bytes);
    return { text, value: JSON.parse(text) };
  } catch {
    throw new WebhookVerificationError('invalid_json', 'body: the signed webhook body is not UTF-8 JSON');
  }
}

/** A delivery that passed verification: its event and its trimmed `webhook-id`. @internal */
export interface VerifiedDelivery {
  event: WebhookEvent;
  webhookId: string;
  /** The body as text: the lanes queue it as it came instead of serializing the event again. */
  text: string;
}

/** Verification with its options checked and every secret's signer prepared, once. @internal */
export interface PreparedVerification {
  signers: readonly Signer[];
  toleranceSec: number;
  /** The user's clock, checked on every reading (it may break later); `undefined` reads `Date.now()`. */
  now: unknown;
}

/** Checks the options of a verification and prepares its signers; throws what verifyWebhook throws. @internal */
export function prepareVerification(options: VerifyWebhookOptions): PreparedVerification {
  const { toleranceSec = DEFAULT_TOLERANCE_SEC, now } = options ?? {};
  if (typeof toleranceSec !== 'number' || !(toleranceSec >= 0)) {
    throw new WebhookVerificationError('invalid_options', 'toleranceSec: expected a number of seconds >= 0');
  }
  const signers = decodeSecrets(options?.secret);
  return { signers, toleranceSec, now };
}

/**
 * Verifies a webhook delivery against the raw body and returns the typed event. Unknown event types
 * are returned as they came. Every failure is a {@link WebhookVerificationError} with a `code`.
 *
 * @example
 * const event = await verifyWebhook(await request.text(), request.headers, { secret: env.WEBHOOK_SECRET });
 * if (event.type === 'message.received') console.log(event.message.parts);
 */
export async function verifyWebhook(
  body: WebhookBody,
  headers: WebhookHeaders,
  options: VerifyWebhookOptions,
): Promise<WebhookEvent> {
  const bytes = bodyBytes(body);
  const prepared = prepareVerification(options);
  return (await verifyPrepared(bytes, headers, prepared)).event;
}

/**
 * The `v1` signatures of a `webhook-signature` header. Several may be sent (the sender rotating its
 * secret): `v1,<b64> v1,<b64>`; a repeated header joined by a runtime as `a, b` leaves a trailing
 * comma, dropped here.
 */
function v1Signatures(raw: string): string[] {
  // The usual header, one signature and nothing else, without the split and its arrays.
  if (!ANY_SPACE.test(raw) && raw.charCodeAt(raw.length - 1) !== COMMA) {
    return raw.startsWith('v1,') ? [raw.slice(3)] : [];
  }
  return raw
    .split(/\s+/)
    .map((token) => token.replace(/,+$/, ''))
    .filter((token) => token.startsWith('v1,'))
    .map((token) => token.slice(3));
}
const ANY_SPACE = /\s/;
const COMMA = 44;

/**
 * The one verification path, of {@link verifyWebhook} and of the bot (which prepares once): the
 * clock, the headers, the timestamp, the signature over the raw bytes, then the JSON and its shape.
 * Synchronous when every signer is (node:crypto), so a delivery on Node waits for no turn of the
 * event loop here; a promise when one signs with Web Crypto.
 * @internal
 */
export function verifyPrepared(
  bytes: Uint8Array,
  headers: WebhookHeaders,
  prepared: PreparedVerification,
): VerifiedDelivery | Promise<VerifiedDelivery> {
  const { toleranceSec } = prepared;
  const nowSec = prepared.now === undefined ? Math.floor(Date.now() / 1000) : clockSeconds(prepared.now);

  const id = readHeader(headers, 'webhook-id')?.trim();
  const rawTimestamp = readHeader(headers, 'webhook-timestamp');
  const rawSignature = readHeader(headers, 'webhook-signature');
  if (!id || !rawTimestamp?.trim() || !rawSignature?.trim()) {
    const missing = [
      id ? undefined : 'webhook-id',
      rawTimestamp?.trim() ? undefined : 'webhook-timestamp',
      rawSignature?.trim() ? undefined : 'webhook-signature',
    ].filter(Boolean);
    throw new WebhookVerificationError('missing_headers', `missing header(s): ${missing.join(', ')}`);
  }

  const timestamp = readTimestamp(rawTimestamp, nowSec, toleranceSec);
  const candidates = v1Signatures(rawSignature);
  const { signers } = prepared;
  const expected: (string | Promise<string>)[] = [];
  let pending = false;
  for (const sign of signers) {
    const signed = sign(id, timestamp, bytes);
    if (typeof signed !== 'string') pending = true;
    expected.push(signed);
  }
  if (pending) {
    return Promise.all(expected).then((signatures) => verifiedBody(bytes, id, candidates, signatures));
  }
  return verifiedBody(bytes, id, candidates, expected as string[]);
}

/** The delivery once its expected signatures are known: the signature checked, then the JSON. */
function verifiedBody(
  bytes: Uint8Array,
  id: string,
  candidates: readonly string[],
  signatures: readonly string[],
): VerifiedDelivery {
  let matched = false;
  // No early exit: every candidate is compared against every secret.
  for (const signature of signatures) {
    for (const candidate of candidates) matched = timingSafeEqual(candidate, signature) || matched;
  }
  if (!matched) {
    throw new WebhookVerificationError(
      'no_matching_signature',
      'webhook-signature: no v1 signature matches the body with the webhook secret',
    );
  }

  const { text, value } = parseJson(bytes);
  const result = parseWebhookEvent(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue?.path.length ? issue.path.join('.') : 'body';
    throw new WebhookVerificationError(
      'invalid_event',
      `${field}: the signed body is not a webhook event (${issue?.message ?? 'invalid shape'})`,
    );
  }
  return { event: result.data, webhookId: id, text };
}
