// The Standard Webhooks signing scheme (PROTOCOL.md section 6): secrets (their rule, their key, a
// fresh one), HMAC-SHA256 over `{id}.{timestamp}.{body}` with a secret's key, constant-time
// comparison, and signing a payload. The key is prepared once per secret rather than per delivery:
// on Node (and any runtime with `process.getBuiltinModule`) node:crypto with a KeyObject, which signs
// synchronously; elsewhere Web Crypto, with the imported CryptoKey kept (an import per call costs
// many times the signature). node:crypto is looked up when first needed, never imported, so the
// package still bundles for browsers and workers.

import type * as NodeCrypto from 'node:crypto';
import { ValidationError } from '../core/errors.js';
import type { FieldIssue } from '../schemas/issues.js';

const encoder = new TextEncoder();

/** Signs `{id}.{timestamp}.{body}` and answers the signature in base64 (without `v1,`). */
export type Signer = (id: string, timestamp: number | string, body: Uint8Array) => string | Promise<string>;

let nodeCrypto: typeof NodeCrypto | null | undefined;

/** node:crypto when the runtime offers it synchronously; null elsewhere (browsers, most workers). */
function builtinCrypto(): typeof NodeCrypto | null {
  if (nodeCrypto !== undefined) return nodeCrypto;
  try {
    const getBuiltin = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
      ?.getBuiltinModule;
    const found = typeof getBuiltin === 'function' ? getBuiltin('node:crypto') : undefined;
    nodeCrypto =
      typeof (found as typeof NodeCrypto | undefined)?.createHmac === 'function'
        ? (found as typeof NodeCrypto)
        : null;
  } catch {
    nodeCrypto = null;
  }
  return nodeCrypto;
}

/** base64 of bytes, without Node's Buffer. */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** A signer for the key bytes of one secret; `node` null forces Web Crypto (as on runtimes without it). */
export function createSigner(
  key: Uint8Array<ArrayBuffer>,
  node: typeof NodeCrypto | null = builtinCrypto(),
): Signer {
  if (node) {
    const keyObject = node.createSecretKey(key);
    return (id, timestamp, body) =>
      node.createHmac('sha256', keyObject).update(`${id}.${timestamp}.`).update(body).digest('base64');
  }
  let cryptoKey: Promise<CryptoKey> | undefined;
  return async (id, timestamp, body) => {
    cryptoKey ??= crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const prefix = encoder.encode(`${id}.${timestamp}.`);
    const signed = new Uint8Array(prefix.length + body.length);
    signed.set(prefix, 0);
    signed.set(body, prefix.length);
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
function decodeSecret(secret: string): Uint8Array<ArrayBuffer> | undefined {
  const base64 = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (base64.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return undefined;
  try {
    return Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** What is wrong with a webhook secret, for an error message (never the secret itself); `undefined` if nothing. */
export function secretProblem(secret: unknown): string | undefined {
  if (typeof secret === 'string' && signers.has(secret)) return undefined;
  const key = typeof secret === 'string' ? decodeSecret(secret) : undefined;
  if (!key) return 'must be a webhook secret: "whsec_" followed by base64, as registration returned it';
  if (key.length < MIN_SECRET_BYTES) {
    return `is too short to be safe: its key must be at least ${MIN_SECRET_BYTES} bytes (the service issues 32)`;
  }
  return undefined;
}

/** A fresh secret in the Standard Webhooks format: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${toBase64(crypto.getRandomValues(new Uint8Array(32)))}`;
}

// Signers by secret text: a bot verifies every delivery with the same one or two secrets, so the
// key is decoded and prepared once. Bounded, so a caller cycling through secrets cannot grow it.
const SIGNERS_KEPT = 32;
const signers = new Map<string, Signer>();

/** The signer of a `whsec_<base64>` secret, prepared once; `undefined` when {@link secretProblem} finds one. */
export function signerOf(secret: string): Signer | undefined {
  const known = signers.get(secret);
  if (known) return known;
  const key = secretProblem(secret) === undefined ? decodeSecret(secret) : undefined;
  if (!key) return undefined;
  const signer = createSigner(key);
  if (signers.size >= SIGNERS_KEPT) signers.delete(signers.keys().next().value as string);
  signers.set(secret, signer);
  return signer;
}

/** The three Standard Webhooks headers (a type alias, so it passes as a plain header record). */
export type SignedHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

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
  const { signer, timestamp } = checkSignInput(input);
  const payload = typeof input.payload === 'string' ? encoder.encode(input.payload) : input.payload;
  const signature = await signer(input.id, timestamp, payload);
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${signature}`,
  };
}

/** The key and the timestamp in seconds of a signWebhook input; a ValidationError names each bad field. */
function checkSignInput(input: unknown): { signer: Signer; timestamp: number } {
  if (typeof input !== 'object' || input === null) {
    throw new ValidationError([{ field: 'input', message: 'must be an object' }], 'signWebhook');
  }
  const { id, payload, secret, timestamp } = input as Record<string, unknown>;
  const issues: FieldIssue[] = [];
  // The secret itself is never put in a message.
  const problem = secretProblem(secret);
  const signer = problem === undefined ? signerOf(secret as string) : undefined;
  if (problem !== undefined) issues.push({ field: 'secret', message: problem });
  if (typeof id !== 'string' || id.trim() === '') {
    issues.push({ field: 'id', message: 'must be a non-blank string' });
  }
  if (typeof payload !== 'string' && !(payload instanceof Uint8Array)) {
    issues.push({ field: 'payload', message: 'must be the body as a string or bytes' });
  }
  const seconds =
    timestamp === undefined
      ? Math.floor(Date.now() / 1000)
      : timestamp instanceof Date
        ? Math.floor(timestamp.getTime() / 1000)
        : timestamp;
  if (typeof seconds !== 'number' || !Number.isSafeInteger(seconds) || seconds < 0) {
    issues.push({ field: 'timestamp', message: 'must be a valid Date or a whole number of Unix seconds' });
  }
  if (!signer || issues.length > 0) throw new ValidationError(issues, 'signWebhook');
  return { signer, timestamp: seconds as number };
}
