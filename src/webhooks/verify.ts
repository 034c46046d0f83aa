// Verifying a delivery (PROTOCOL.md section 6, Standard Webhooks), one idea from the bytes to the
// typed event:
// - the body read with a cap, so a sender cannot make the bot (or the mock) buffer an unbounded body
//   before anything is checked;
// - the signing scheme: secrets (their rule, their key, a fresh one), HMAC-SHA256 over
//   `{id}.{timestamp}.{body}` with a secret's key, constant-time comparison, and signing a payload.
//   The key is prepared once per secret rather than per delivery: on Node (and any runtime with
//   `process.getBuiltinModule`) node:crypto with a KeyObject, which signs synchronously; elsewhere Web
//   Crypto, with the imported CryptoKey kept (an import per call costs many times the signature).
//   node:crypto is looked up when first needed, never imported, so the package still bundles for
//   browsers and workers;
// - the verification: its inputs read from whatever a runtime or framework hands over, then the clock,
//   the signature over the raw bytes, the JSON and the event's schema (src/schemas/webhooks.ts, which
//   names the first bad field). Every refusal is a WebhookVerificationError with a code, never a
//   TypeError, so every access to the input is guarded.

import type * as NodeCrypto from 'node:crypto';
import type * as z from 'zod/mini';
import { AgentMessagingError, ValidationError } from '../core/errors.js';
import { readAtMost } from '../core/read-at-most.js';
import { type FieldIssue, parseByType } from '../schemas/issues.js';
import { type WebhookEvent, WebhookEventBase, webhookEventSchemas } from '../schemas/webhooks.js';

// The body, read with a cap.

/** Largest delivery body read, in bytes: the service's own request limit (PROTOCOL.md section 2). */
export const MAX_DELIVERY_BYTES = 1024 * 1024;

/**
 * The request's body, or `'too_large'` when it is over `limit` bytes: a declared `content-length`
 * is trusted to refuse early, and the bytes are counted as they come in case it is absent or wrong,
 * so a sender cannot make the bot buffer an unbounded body before its signature is checked.
 * @internal
 */
export async function readLimitedBody(request: Request, limit: number): Promise<Uint8Array | 'too_large'> {
  const declared = request.headers.get('content-length')?.trim();
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limit) {
    await request.body?.cancel().catch(() => {});
    return 'too_large';
  }
  if (request.body === null) return new Uint8Array(0);
  const { bytes, over } = await readAtMost(request.body, limit);
  return over ? 'too_large' : bytes;
}

// The signing scheme.

const encoder = new TextEncoder();

/** Signs `{id}.{timestamp}.{body}` and answers the signature in base64 (without `v1,`). */
export type Signer = (id: string, timestamp: number | string, body: Uint8Array) => string | Promise<string>;

/** node:crypto where the runtime hands it over synchronously; undefined elsewhere (browsers, most workers). */
const builtinCrypto = () =>
  (
    globalThis as { process?: { getBuiltinModule?: (id: string) => typeof NodeCrypto | undefined } }
  ).process?.getBuiltinModule?.('node:crypto');

/** base64 of a few bytes (a key, a signature), without Node's Buffer. */
const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** A signer for the key bytes of one secret; `node` null forces Web Crypto (as on runtimes without it). */
export function createSigner(
  key: Uint8Array<ArrayBuffer>,
  node: typeof NodeCrypto | null | undefined = builtinCrypto(),
): Signer {
  if (node) {
    const keyObject = node.createSecretKey(key);
    return (id, timestamp, body) =>
      node.createHmac('sha256', keyObject).update(`${id}.${timestamp}.`).update(body).digest('base64');
  }
  let cryptoKey: Promise<CryptoKey> | undefined;
  return async (id, timestamp, body) => {
    cryptoKey ??= crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const signed = await new Blob([`${id}.${timestamp}.`, body as Uint8Array<ArrayBuffer>]).arrayBuffer();
    return toBase64(new Uint8Array(await crypto.subtle.sign('HMAC', await cryptoKey, signed)));
  };
}

/** Compares without an early exit, so the time taken does not tell how much of a guess was right. */
export function timingSafeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i % (b.length || 1));
  return diff === 0;
}

/**
 * The fewest key bytes a secret may have: Standard Webhooks asks for 24 to 64 random bytes, and the
 * service issues 32 (PROTOCOL.md section 3). A shorter key can be guessed, so it is refused.
 */
export const MIN_SECRET_BYTES = 24;

/** The key bytes of a `whsec_<base64>` secret; `undefined` when it is not one. */
function decodeSecret(secret: unknown): Uint8Array<ArrayBuffer> | undefined {
  if (typeof secret !== 'string') return undefined;
  const base64 = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return undefined;
  try {
    return Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** A fresh secret in the Standard Webhooks format: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${toBase64(crypto.getRandomValues(new Uint8Array(32)))}`;
}

// Signers by secret text: a bot verifies every delivery with the same one or two secrets, so the
// key is decoded and prepared once. Bounded, so a caller cycling through secrets cannot grow it.
const SIGNERS_KEPT = 32;
const signers = new Map<unknown, Signer>();

/**
 * The signer of a `whsec_<base64>` secret, prepared once; else what is wrong with the secret, for an
 * error message (which never holds the secret itself).
 */
function signerOf(secret: unknown): Signer | string {
  const known = signers.get(secret);
  if (known) return known;
  const key = decodeSecret(secret);
  if (!key) return 'must be a webhook secret: "whsec_" followed by base64, as registration returned it';
  if (key.length < MIN_SECRET_BYTES) {
    return `is too short to be safe: its key must be at least ${MIN_SECRET_BYTES} bytes (the service issues 32)`;
  }
  const signer = createSigner(key);
  if (signers.size >= SIGNERS_KEPT) signers.delete(signers.keys().next().value);
  signers.set(secret, signer);
  return signer;
}

/** The three Standard Webhooks headers, in the order a missing one is named. */
const SIGNED_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/** The three Standard Webhooks headers (a type alias, so it passes as a plain header record). */
export type SignedHeaders = Record<(typeof SIGNED_HEADERS)[number], string>;

/**
 * The three Standard Webhooks headers for a payload. A bad secret, id, payload or timestamp is a
 * ValidationError naming it, before anything is signed.
 *
 * @example
 * const headers = await signWebhook({ id: 'evt_1', payload: JSON.stringify(event), secret });
 */
export async function signWebhook(input: {
  id: string;
  payload: string | Uint8Array;
  secret: string;
  /** Unix seconds, or a Date; defaults to now. */
  timestamp?: number | Date;
}): Promise<SignedHeaders> {
  if (typeof input !== 'object' || input === null) {
    throw new ValidationError([{ field: 'input', message: 'must be an object' }], 'signWebhook');
  }
  const { id, payload, secret, timestamp = new Date() } = input as Record<string, unknown>;
  const issues: FieldIssue[] = [];
  const [signer] = secretSigners(secret, 'secret', issues);
  if (typeof id !== 'string' || id.trim() === '') {
    issues.push({ field: 'id', message: 'must be a non-blank string' });
  }
  if (typeof payload !== 'string' && !(payload instanceof Uint8Array)) {
    issues.push({ field: 'payload', message: 'must be the body as a string or bytes' });
  }
  const seconds = timestamp instanceof Date ? Math.floor(timestamp.getTime() / 1000) : timestamp;
  if (typeof seconds !== 'number' || !Number.isSafeInteger(seconds) || seconds < 0) {
    issues.push({ field: 'timestamp', message: 'must be a valid Date or a whole number of Unix seconds' });
  }
  if (!signer || issues.length > 0) throw new ValidationError(issues, 'signWebhook');
  const signature = await signer(input.id, seconds as number, bodyBytes(payload));
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': `v1,${signature}`,
  };
}

// The verification.

/** Why a webhook delivery was refused; one string per failure, stable across versions. */
export type WebhookVerificationErrorCode =
  /** `webhook-id`, `webhook-timestamp` or `webhook-signature` is absent or empty. */
  | 'missing_headers'
  /** `webhook-timestamp` is not a whole number of Unix seconds. */
  | 'invalid_timestamp'
  /** `webhook-timestamp` is further in the past than the tolerance. */
  | 'timestamp_too_old'
  /** `webhook-timestamp` is further in the future than the tolerance (milliseconds land here). */
  | 'timestamp_too_new'
  /** No `v1,` signature in `webhook-signature` matches any of the secrets. */
  | 'no_matching_signature'
  /** The signed body is not UTF-8 JSON. */
  | 'invalid_json'
  /** The body was handed over as a parsed object instead of the raw bytes that were signed. */
  | 'body_already_parsed'
  /** The body is neither a string nor bytes. */
  | 'invalid_body'
  /** A secret is not in the `whsec_<base64>` format or its key is under 24 bytes, or the list is empty. */
  | 'invalid_secret'
  /** The JSON is signed but is not a webhook event of the shape PROTOCOL.md section 6 fixes. */
  | 'invalid_event'
  /** An option of the verifier itself is wrong, such as a negative `toleranceSec`. */
  | 'invalid_options';

/**
 * A webhook delivery that must not be trusted. Never carries the secret or the signature.
 *
 * @example
 * try { await verifyWebhook(body, headers, { secret }); }
 * catch (error) { if (WebhookVerificationError.is(error)) console.warn(error.code); }
 */
export class WebhookVerificationError extends AgentMessagingError {
  static override readonly kind: string = 'WebhookVerificationError';
  /** Which check failed. */
  readonly code: WebhookVerificationErrorCode;

  constructor(code: WebhookVerificationErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** Headers as runtimes give them: a `Headers` object, or a plain record in any case, values possibly arrays. */
export type WebhookHeaders =
  | Headers
  | { get(name: string): string | null | undefined }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** The body as it was signed: text, or the bytes (a Node `Buffer` is bytes). */
export type WebhookBody = string | Uint8Array | ArrayBuffer;

/**
 * One header's value, whatever the container; a repeated header is joined with `, ` as `Headers` does.
 * A container that throws while read (a broken `get`, a Proxy) is refused as missing that header.
 */
export function readHeader(headers: unknown, name: string): string | undefined {
  try {
    if (typeof headers !== 'object' || headers === null) return undefined;
    const getter = (headers as { get?: unknown }).get;
    // Node's `req.headers` has lower-case names: looked up as they are, then in any case.
    const record = headers as Record<string, unknown>;
    const value: unknown =
      typeof getter === 'function'
        ? getter.call(headers, name)
        : (record[name] ?? record[Object.keys(record).find((key) => key.toLowerCase() === name) ?? name]);
    if (typeof value === 'string') return value;
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value.join(', ');
    return undefined;
  } catch {
    throw new WebhookVerificationError(
      'missing_headers',
      `${name}: the headers object threw while it was read`,
    );
  }
}

const RAW_BODY_HELP =
  'Pass the raw request body exactly as received, a string or bytes: ' +
  "with Express mount `express.raw({ type: 'application/json' })` on the webhook route " +
  '(or use toNodeHandler from agent-messaging/node); with a Fetch Request use `await request.text()`. ' +
  'A body that was parsed and serialized again no longer matches its signature.';

/** The body as bytes; a parsed object or anything else is refused with how to get the raw body. */
export function bodyBytes(body: unknown): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  const parsed = typeof body === 'object' && body !== null;
  const what = parsed
    ? 'was already parsed into an object'
    : `must be a string or bytes, got ${body === null ? 'null' : typeof body}`;
  throw new WebhookVerificationError(
    parsed ? 'body_already_parsed' : 'invalid_body',
    `The webhook body ${what}. ${RAW_BODY_HELP}`,
  );
}

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

/**
 * The signers of a secret option (one secret, or several while rotating), each prepared once; each
 * problem of it is added to `issues` by field (`secret`, or `secret[1]` in a list). @internal
 */
export function secretSigners(secret: unknown, field: string, issues: FieldIssue[]): Signer[] {
  const secrets: unknown[] = Array.isArray(secret) ? secret : [secret];
  if (secrets.length === 0) issues.push({ field, message: 'must hold at least one webhook secret' });
  const signers: Signer[] = [];
  secrets.forEach((item, index) => {
    const signer = signerOf(item);
    if (typeof signer !== 'string') signers.push(signer);
    else issues.push({ field: secrets.length > 1 ? `${field}[${index}]` : field, message: signer });
  });
  return signers;
}

/** The clock's reading in Unix seconds; a clock that is not a function answering a valid Date is refused. */
function clockSeconds(now: unknown): number {
  let ms = Number.NaN;
  try {
    // getTime reads a Date of any realm (a vm context, an iframe) and throws for anything else.
    ms = Date.prototype.getTime.call((now as () => unknown)());
  } catch {
    // A clock that is no function, throws or answers no Date is refused below like any other broken clock.
  }
  // NaN compares false with everything: it would pass every timestamp through the tolerance checks.
  if (!Number.isFinite(ms)) {
    throw new WebhookVerificationError('invalid_options', 'now: expected a function answering a valid Date');
  }
  return Math.floor(ms / 1000);
}

function readTimestamp(raw: string, now: number, toleranceSec: number): number {
  if (!/^\d{1,16}$/.test(raw)) {
    throw new WebhookVerificationError(
      'invalid_timestamp',
      'webhook-timestamp: expected a whole number of Unix seconds',
    );
  }
  const timestamp = Number(raw);
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

/** A delivery that passed verification: its event and its trimmed `webhook-id`. @internal */
export interface VerifiedDelivery {
  event: WebhookEvent;
  webhookId: string;
  /** The body as text: the lanes queue it as it came instead of serializing the event again. */
  text: string;
}

/** Verification with its options checked and every secret's signer prepared, once (the bot's). @internal */
export interface PreparedVerification {
  signers: readonly Signer[];
  toleranceSec: number;
  /** The user's clock, checked on every reading (it may break later); `undefined` reads `Date.now()`. */
  now: unknown;
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
  const { toleranceSec = DEFAULT_TOLERANCE_SEC, now } = options ?? {};
  if (typeof toleranceSec !== 'number' || !(toleranceSec >= 0)) {
    throw new WebhookVerificationError('invalid_options', 'toleranceSec: expected a number of seconds >= 0');
  }
  const issues: FieldIssue[] = [];
  const signers = secretSigners(options?.secret, 'secret', issues);
  const [issue] = issues;
  if (issue) throw new WebhookVerificationError('invalid_secret', `${issue.field}: ${issue.message}`);
  return (await verifyPrepared(bytes, headers, { signers, toleranceSec, now })).event;
}

/**
 * The `v1` signatures of a `webhook-signature` header. Several may be sent (the sender rotating its
 * secret): `v1,<b64> v1,<b64>`; a repeated header joined by a runtime as `a, b` leaves a trailing
 * comma, dropped here.
 */
function v1Signatures(raw: string): string[] {
  const found: string[] = [];
  // The usual header is one token: the regex split (a third of a microsecond) only when it has blanks.
  for (const token of ANY_BLANK.test(raw) ? raw.split(/\s+/) : [raw]) {
    if (token.startsWith('v1,')) found.push(token.slice(3).replace(/,+$/, ''));
  }
  return found;
}

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
  const rawTimestamp = readHeader(headers, 'webhook-timestamp')?.trim();
  const rawSignature = readHeader(headers, 'webhook-signature')?.trim();
  if (!id || !rawTimestamp || !rawSignature) {
    const missing = SIGNED_HEADERS.filter((_, index) => ![id, rawTimestamp, rawSignature][index]);
    throw new WebhookVerificationError('missing_headers', `missing header(s): ${missing.join(', ')}`);
  }

  const timestamp = readTimestamp(rawTimestamp, nowSec, toleranceSec);
  const candidates = v1Signatures(rawSignature);
  const expected = prepared.signers.map((sign) => sign(id, timestamp, bytes));
  if (expected.every((signature): signature is string => typeof signature === 'string')) {
    return verifiedBody(bytes, id, candidates, expected);
  }
  return Promise.all(expected).then((signatures) => verifiedBody(bytes, id, candidates, signatures));
}

/**
 * Checks a decoded webhook body against its type's schema; an unknown type keeps the base shape only
 * and passes as it came. The last check of a verification, and of a member another process queued
 * (lanes.ts). @internal
 */
export const parseWebhookEvent = (data: unknown): z.core.util.SafeParseResult<WebhookEvent> =>
  parseByType<WebhookEvent>(webhookEventSchemas, WebhookEventBase, data);

const ANY_BLANK = /\s/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

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

  let text: string;
  let value: unknown;
  try {
    text = utf8.decode(bytes);
    value = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('invalid_json', 'body: the signed webhook body is not UTF-8 JSON');
  }
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
