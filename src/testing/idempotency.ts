// Idempotency (PROTOCOL.md section 4): keys scoped to (caller, method, path), kept 24 hours; the
// first completed answer is replayed, another body is 422, a key still in flight is 409.
import { IdempotencyKey } from '../schemas/common.js';
import { checkJson, decodeJson } from './body.js';
import { type Answer, invalid, JsonAnswer, MockError, type MockRequest, withHeaders } from './http.js';
import type { RouteContext } from './router.js';
import type { MockState } from './state.js';

const RETENTION_MS = 24 * 60 * 60 * 1000;

/** A stored answer: a JSON answer as it was, or how to replay one that is not JSON (a stream). */
export type StoredAnswer = JsonAnswer | ((ctx: RouteContext) => Answer);

/** One key's request and, once it completed, its answer (no `replay` while it is in flight). */
export interface KeyRecord {
  /** The key's scope, which the record leaves when its work fails. */
  keys: Map<string, KeyRecord>;
  key: string;
  /** True for the streaming form (`?stream=true`). */
  stream: boolean;
  /** The JSON body text as sent ('' for none); compared as JSON, key order and spacing aside. */
  body: string;
  created_at: number;
  replay?: StoredAnswer;
}

/**
 * The record of the request's `Idempotency-Key`: a completed one to replay, or a new one in flight.
 * 400 for a missing or malformed key, 422 for the key with another request, 409 while it is in flight.
 */
export function beginKeyed(
  state: MockState,
  callerId: string,
  request: MockRequest,
  print: { stream: boolean; body: string },
  nowMs: number,
): KeyRecord {
  const header = request.headers.get('idempotency-key');
  if (header === null) throw invalid('Idempotency-Key header: is required');
  const key = checkJson(IdempotencyKey, header, 'Idempotency-Key header');
  const scope = `${callerId} ${request.method.toUpperCase()} ${request.url.pathname}`;
  let keys = state.idempotency.get(scope);
  if (!keys) {
    keys = new Map();
    state.idempotency.set(scope, keys);
  }
  const existing = keys.get(key);
  if (existing && existing.created_at + RETENTION_MS > nowMs) {
    // A retry sends the very bytes again, so the canonical forms are computed only when texts differ.
    const same =
      existing.body === print.body ||
      canonicalJson(decodeJson(existing.body)) === canonicalJson(decodeJson(print.body));
    if (existing.stream !== print.stream || !same) {
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
    return existing;
  }
  const record: KeyRecord = { keys, key, ...print, created_at: nowMs };
  keys.set(key, record);
  return record;
}

/**
 * Ends a request in flight: keeps `replay` for the repeats, or (the work failed) frees the key unless
 * another request has taken it since. After a reset the record belongs to maps nothing reads.
 */
export function settleKeyed(record: KeyRecord, replay: StoredAnswer | undefined): void {
  if (replay) record.replay = replay;
  else if (record.keys.get(record.key) === record) record.keys.delete(record.key);
}

/** A fresh copy of a stored answer, marked replayed (its Request-Id is set anew by the entry). */
export function replayAnswer(stored: StoredAnswer, ctx: RouteContext): Answer {
  const answer =
    stored instanceof JsonAnswer
      ? new JsonAnswer(stored.status, stored.text, { ...stored.headers })
      : stored(ctx);
  return withHeaders(answer, { 'idempotent-replayed': 'true' });
}

/** A stable text for a JSON value, key order aside, so equal bodies compare equal. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}
