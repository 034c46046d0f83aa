// The request log of PROTOCOL.md section 13: each /v1 request as it arrived, before any fault.
import type { RequestLogEntry } from '../schemas/mock-control.js';
import type { MockRequest } from './http.js';
import type { MockState, MockWorld } from './state.js';

/** Appends an entry for the request (and tells the live feed); a streamed body is filled in later by the caller. */
export function logRequest(world: MockWorld, request: MockRequest, body: string | null): RequestLogEntry {
  const { url } = request;
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    // Bearer tokens are credentials: the log shows their kind, never their value.
    headers[name] = name !== 'authorization' ? value : /^bearer\s/i.test(value) ? 'Bearer ***' : '***';
  });
  const entry: RequestLogEntry = {
    method: request.method.toUpperCase(),
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
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

/** An entry as the log shows it, which later changes to the mock (a streamed body filling in) do not alter. */
function copyEntry(entry: RequestLogEntry): RequestLogEntry {
  return { ...entry, query: { ...entry.query }, headers: { ...entry.headers } };
}
