// Idempotency (PROTOCOL.md section 4): keys scoped to (caller, method, path), kept 24 hours; the
// first completed answer is replayed, another body is 422, a key still in flight is 409.

import { IdempotencyKey } from '../schemas/common.js';
import { canonicalJson, checkJson, decodeJson } from './body.js';
import type { HeaderReader } from './http.js';
import { type Answer, invalid, JsonAnswer, MockError } from './http.js';
import type { RouteContext } from './router.js';
import type { IdempotencyRecord, MockState, RequestPrint } from './state.js';

const RETENTION_MS = 24 * 60 * 60 * 1000;

/** A reserved key: finish it with the answer to store, or release it when the work failed. */
export interface Reservation {
  store(replay: StoredAnswer): void;
  release(): void;
}

/** The `Idempotency-Key` header, checked; 400 naming the header when missing or malformed. */
export function idempotencyKeyOf(headers: HeaderReader): string {
  const key = headers.get('idempotency-key');
  if (key === null) throw invalid('Idempotency-Key header: is required');
  return checkJson(IdempotencyKey, key, 'Idempotency-Key header');
}

/**
 * True when two requests under one key are the same request: both streamed or both not, and bodies
 * that are the same JSON, key order and spacing aside. The same text is the common case (a retry
 * sends the very bytes again), so the canonical forms are computed only when the texts differ.
 */
function sameRequest(a: RequestPrint, b: RequestPrint): boolean {
  if (a.stream !== b.stream) return false;
  return a.body === b.body || canonicalJson(decodeJson(a.body)) === canonicalJson(decodeJson(b.body));
}

/** A stored answer: a JSON answer kept as it was, or how to replay one that is not JSON (a stream). */
export type StoredAnswer = JsonAnswer | ((ctx: RouteContext) => Answer);

/** A fresh copy of a stored answer, for one replay (the entry marks it replayed). */
export function replayAnswer(stored: StoredAnswer, ctx: RouteContext): Answer {
  if (!(stored instanceof JsonAnswer)) return stored(ctx);
  return new JsonAnswer(stored.status, stored.text, { ...stored.headers });
}

/**
 * Looks the key up in its scope: answers the stored replay, throws 422/409, or reserves the key for
 * this request and answers the reservation.
 */
export function beginIdempotent(
  state: MockState,
  scope: string,
  key: string,
  print: RequestPrint,
  nowMs: number,
): { replay: StoredAnswer } | { reservation: Reservation } {
  // Keys by scope, then by the key itself: the key's string is the one the request log keeps, so
  // a stored key costs no string of its own.
  let keys = state.idempotency.get(scope);
  if (!keys) {
    keys = new Map();
    state.idempotency.set(scope, keys);
  }
  const existing = keys.get(key);
  if (existing && existing.created_at + RETENTION_MS > nowMs) {
    if (!sameRequest(existing.print, print)) {
      throw new MockError(
        422,
        'idempotency_key_reused',
        'Idempotency-Key header: was used with a different request body',
      );
    }
    if (!existing.replay) {
      throw new MockError(
        409,
        'idempotency_in_progress',
        'Idempotency-Key header: a request with this key is still in flight',
      );
    }
    return { replay: existing.replay };
  }
  const record: IdempotencyRecord = { print, created_at: nowMs };
  keys.set(key, record);
  return { reservation: new KeyReservation(keys, key, record) };
}

/**
 * A key reserved in its scope (a class: no closures made per request). After a reset the record
 * belongs to the old state's maps, which nothing reads any more, so storing into it changes nothing.
 */
class KeyReservation implements Reservation {
  constructor(
    private readonly keys: Map<string, IdempotencyRecord>,
    private readonly key: string,
    private readonly record: IdempotencyRecord,
  ) {}

  /** Keeps the answer to replay. */
  store(replay: StoredAnswer): void {
    this.record.replay = replay;
  }

  /** Frees the key, unless another request has taken it since. */
  release(): void {
    if (this.keys.get(this.key) === this.record) this.keys.delete(this.key);
  }
}

// The headers of nearly every stored JSON answer, kept once instead of once per key.
const JSON_ONLY: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'application/json' });

/** What to store of a JSON answer: the same status and body (and headers but its Request-Id). */
export function storedJson(response: JsonAnswer): StoredAnswer {
  // Copied now: the entry sets this answer's Request-Id in place afterwards.
  const headers: Record<string, string> = {};
  let count = 0;
  for (const name in response.headers) {
    if (name === 'request-id') continue;
    headers[name] = response.headers[name]!;
    count += 1;
  }
  const kept = count === 1 && headers['content-type'] === JSON_ONLY['content-type'] ? JSON_ONLY : headers;
  return new JsonAnswer(response.status, response.text, kept as Record<string, string>);
}

/** What to store of an answer that is not JSON: its status, body and headers but its Request-Id. */
export async function snapshotReplay(response: Response): Promise<StoredAnswer> {
  const body = await response.clone().text();
  const status = response.status;
  const headers = [...response.headers].filter(([name]) => name !== 'request-id');
  return () => new Response(body, { status, headers });
}

/** The scope of a key: who sent it to which endpoint. */
export function idempotencyScope(callerId: string, method: string, path: string): string {
  return JSON.stringify([callerId, method.toUpperCase(), path]);
}
