// Idempotency (PROTOCOL.md section 4): keys scoped to (caller, method, path), kept 24 hours; the
// first completed answer is replayed, another body is 422, a key still in flight is 409.

import { IdempotencyKey } from '../schemas/common.js';
import { describeIssues, safeParse } from '../schemas/issues.js';
import { invalid, MockError } from './http.js';
import type { RouteContext } from './router.js';
import type { IdempotencyRecord, MockState } from './state.js';

const RETENTION_MS = 24 * 60 * 60 * 1000;

/** A reserved key: finish it with the answer to store, or release it when the work failed. */
export interface Reservation {
  store(replay: (ctx: RouteContext) => Response): void;
  release(): void;
}

/** The `Idempotency-Key` header, checked; 400 naming the header when missing or malformed. */
export function idempotencyKeyOf(request: Request): string {
  const key = request.headers.get('idempotency-key');
  if (key === null) throw invalid('Idempotency-Key header: is required');
  const parsed = safeParse(IdempotencyKey, key);
  if (!parsed.success) throw invalid(describeIssues(parsed.error, 'Idempotency-Key header'));
  return key;
}

/**
 * Looks the key up: answers the stored replay, throws 422/409, or reserves the key for this
 * request and answers the reservation.
 */
export function beginIdempotent(
  state: MockState,
  scope: string,
  fingerprint: string,
  nowMs: number,
): { replay: (ctx: RouteContext) => Response } | { reservation: Reservation } {
  const existing = state.idempotency.get(scope);
  if (existing && existing.created_at + RETENTION_MS > nowMs) {
    if (existing.fingerprint !== fingerprint) {
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
  const record: IdempotencyRecord = { fingerprint, created_at: nowMs };
  state.idempotency.set(scope, record);
  const generation = state.generation;
  return {
    reservation: {
      store: (replay) => {
        if (state.generation === generation) record.replay = replay;
      },
      release: () => {
        if (state.idempotency.get(scope) === record) state.idempotency.delete(scope);
      },
    },
  };
}

/** A replay of a stored JSON answer: the same status and body (the pipeline marks it replayed). */
export async function snapshotReplay(response: Response): Promise<(ctx: RouteContext) => Response> {
  const body = await response.clone().text();
  const status = response.status;
  const headers = [...response.headers].filter(([name]) => name !== 'request-id');
  return () => new Response(body, { status, headers });
}

/** The scope of a key: who sent it to which endpoint. */
export function idempotencyScope(callerId: string, method: string, path: string, key: string): string {
  return JSON.stringify([callerId, method.toUpperCase(), path, key]);
}
