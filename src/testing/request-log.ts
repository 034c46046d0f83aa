// The request log of PROTOCOL.md section 13: each /v1 request as it arrived, before any fault.
import type { RequestLogEntry } from '../schemas/mock-control.js';
import type { HeaderReader } from './incoming.js';
import type { MockState } from './state.js';

/** Bearer tokens are credentials: the log shows their kind, never their value. */
function redact(name: string, value: string): string {
  if (name !== 'authorization') return value;
  return /^bearer\s/i.test(value) ? 'Bearer ***' : '***';
}

/** Appends an entry for the request; a streamed body is filled in later by the caller. */
export function logRequest(
  state: MockState,
  request: { method: string; headers: HeaderReader },
  url: URL,
  body: string | null,
): RequestLogEntry {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = redact(name.toLowerCase(), value);
  });
  const entry: RequestLogEntry = {
    method: request.method.toUpperCase(),
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers,
    body,
  };
  state.requests.push(entry);
  return entry;
}

/** A copy of the log that later changes to the mock do not alter. */
export function snapshotRequests(state: MockState): RequestLogEntry[] {
  return state.requests.map((entry) => ({
    ...entry,
    query: { ...entry.query },
    headers: { ...entry.headers },
  }));
}
