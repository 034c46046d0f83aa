// Standard Webhooks signatures (PROTOCOL.md section 6), on Web Crypto so they run on every runtime.

import { ValidationError } from '../core/errors.js';
import type { FieldIssue } from '../schemas/issues.js';

const encoder = new TextEncoder();

/** The key bytes of a `whsec_<base64>` secret; `undefined` when it is not one. */
export function decodeSecret(secret: string): Uint8Array<ArrayBuffer> | undefined {
  if (typeof secret !== 'string') return undefined;
  const base64 = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (base64.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return undefined;
  try {
    return Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** base64 of bytes, without Node's Buffer. */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** A fresh secret in the Standard Webhooks format: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${toBase64(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/** HMAC-SHA256 over `{id}.{timestamp}.{body}`, base64 (without the `v1,` prefix). */
export async function computeSignature(
  key: Uint8Array<ArrayBuffer>,
  id: string,
  timestamp: number | string,
  body: string | Uint8Array,
): Promise<string> {
  const cryptoKey = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const payload = typeof body === 'string' ? encoder.encode(body) : body;
  const signed = new Uint8Array(prefix.length + payload.length);
  signed.set(prefix, 0);
  signed.set(payload, prefix.length);
  return toBase64(new Uint8Array(await crypto.subtle.sign('HMAC', cryptoKey, signed)));
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
  const { key, timestamp } = checkSignInput(input);
  const signature = await computeSignature(key, input.id, timestamp, input.payload);
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${signature}`,
  };
}

/** The key and the timestamp in seconds of a signWebhook input; a ValidationError names each bad field. */
function checkSignInput(input: unknown): { key: Uint8Array<ArrayBuffer>; timestamp: number } {
  if (typeof input !== 'object' || input === null) {
    throw new ValidationError([{ field: 'input', message: 'must be an object' }], 'signWebhook');
  }
  const { id, payload, secret, timestamp } = input as Record<string, unknown>;
  const issues: FieldIssue[] = [];
  // The secret itself is never put in a message.
  const key = typeof secret === 'string' ? decodeSecret(secret) : undefined;
  if (!key) {
    issues.push({
      field: 'secret',
      message: 'must be a Standard Webhooks secret: "whsec_" followed by base64',
    });
  }
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
  if (!key || issues.length > 0) throw new ValidationError(issues, 'signWebhook');
  return { key, timestamp: seconds as number };
}
