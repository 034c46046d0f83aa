// The request log of PROTOCOL.md section 13: each /v1 request as it arrived, before any fault.
import type { RequestLogEntry } from '../schemas/mock-control.js';
import type { HeaderReader, MockRequest } from './http.js';
import type { MockState, MockWorld } from './state.js';

/** A logged request: its headers kept flat (name, value, ...), made the entry's object when it is copied. */
export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: string[];
  body: string | null;
}

/** Appends an entry for the request (and tells the live feed); a streamed body is filled in later by the caller. */
export function logRequest(world: MockWorld, request: MockRequest, body: string | null): LoggedRequest {
  const { url } = request;
  const entry: LoggedRequest = {
    method: request.method.toUpperCase(),
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: flat(request.headers),
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
function copyEntry(entry: LoggedRequest): RequestLogEntry {
  const headers: Record<string, string> = {};
  for (let i = 0; i < entry.headers.length; i += 2) {
    const name = entry.headers[i]!;
    const value = entry.headers[i + 1]!;
    // Bearer tokens are credentials: the log shows their kind, never their value.
    headers[name] = name !== 'authorization' ? value : /^bearer\s/i.test(value) ? 'Bearer ***' : '***';
  }
  return { ...entry, query: { ...entry.query }, headers };
}

/** The headers as one array: cheap to build per request, and holding nothing of the request's own objects. */
function flat(reader: HeaderReader): string[] {
  const headers: string[] = [];
  reader.forEach((value, name) => {
    headers.push(name, value);
  });
  return headers;
}
