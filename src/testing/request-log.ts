// The request log of PROTOCOL.md section 13: each /v1 request as it arrived, before any fault.
import type { RequestLogEntry } from '../schemas/mock-control.js';
import type { MockRequest } from './http.js';
import type { MockState, MockWorld } from './state.js';

/** Bearer tokens are credentials: the log shows their kind, never their value. */
function redact(name: string, value: string): string {
  if (name !== 'authorization') return value;
  return /^bearer\s/i.test(value) ? 'Bearer ***' : '***';
}

// The log keeps every request, so what repeats from one request to the next (a path, a Host, a
// content type) is kept once: the strings a request arrives with are its own copies otherwise.
// Bounded: once full, new values are kept as they come. An Idempotency-Key never repeats, so it is
// not offered (a bearer token is never kept at all).
const REPEATED = new Map<string, string>();
const MOST_REPEATED = 4096;

function once(value: string): string {
  const kept = REPEATED.get(value);
  if (kept !== undefined) return kept;
  if (REPEATED.size < MOST_REPEATED) REPEATED.set(value, value);
  return value;
}

// The query of most requests: none. Entries are copied before anyone outside sees them.
const NO_QUERY: Readonly<Record<string, string>> = Object.freeze({});

/** Appends an entry for the request (and tells the live feed); a streamed body is filled in later by the caller. */
export function logRequest(world: MockWorld, request: MockRequest, body: string | null): RequestLogEntry {
  const { url } = request;
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    const lower = name.toLowerCase();
    if (lower === 'authorization') headers[lower] = redact(lower, value);
    else headers[lower] = lower === 'idempotency-key' ? value : once(value);
  });
  const entry: RequestLogEntry = {
    method: request.method.toUpperCase(),
    path: once(url.pathname),
    query: url.search === '' ? (NO_QUERY as Record<string, string>) : Object.fromEntries(url.searchParams),
    headers,
    body,
  };
  world.state.requests.push(entry);
  world.events.emit(() => ({ type: 'request', request: copyEntry(entry) }));
  return entry;
}

/** A copy of the log that later changes to the mock do not alter. */
export function snapshotRequests(state: MockState): RequestLogEntry[] {
  return state.requests.map(copyEntry);
}

/** An entry that later changes to the mock (a streamed body filling in) do not alter. */
const copyEntry = (entry: RequestLogEntry): RequestLogEntry => ({
  ...entry,
  query: { ...entry.query },
  headers: { ...entry.headers },
});
