// Idempotency keys: random for one call (kept across its retries), derived for a triggering event.

import { nanoid } from 'nanoid';
import { ValidationError } from './errors.js';

/** A fresh key for one call; the transport reuses it for every retry of that call. @internal */
export const randomIdempotencyKey = (): string => nanoid();

const FNV_PRIME = 0x100000001b3n;
const FNV_OFFSET = 0xcbf29ce484222325n;
const MASK_64 = 0xffffffffffffffffn;

// 64-bit FNV-1a over the UTF-16 code units: synchronous and the same on every runtime.
function fnv1a64(text: string): string {
  let hash = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * FNV_PRIME) & MASK_64;
  }
  return hash.toString(16).padStart(16, '0');
}

// Keeps the readable part printable ASCII without spaces, as the header rule asks.
const readable = (text: string, max: number) => text.replace(/[^\x21-\x7e]/g, '_').slice(0, max);

/**
 * A stable `Idempotency-Key` derived from the event that triggered a call, so a redelivered webhook
 * cannot create a second message: the same event id and purpose always give the same key.
 * The key holds the readable purpose and event id plus a hash of both (8 to 255 printable ASCII).
 *
 * @example
 * await client.messages.send(cnv, { text }, { idempotencyKey: idempotencyKeyFor(event.eventId) });
 */
export function idempotencyKeyFor(eventId: string, purpose = 'reply'): string {
  for (const [field, value] of Object.entries({ eventId, purpose })) {
    if (typeof value !== 'string' || value.trim() === '') {
      throw new ValidationError([{ field, message: 'must be a non-blank string' }], 'idempotencyKeyFor');
    }
  }
  // The hash covers both strings whole, so two events that truncate or sanitise alike still differ.
  const hash = fnv1a64(`${purpose.length}:${purpose}:${eventId}`);
  return `${readable(purpose, 40)}:${readable(eventId, 180)}:${hash}`;
}
