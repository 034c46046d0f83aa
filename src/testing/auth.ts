// Authentication (PROTOCOL.md section 3): agent tokens and user sessions, 401 for the wrong kind.

import type { HeaderReader } from './http.js';
import { MockError } from './http.js';
import type { AgentRecord, MockState, UserRecord } from './state.js';

/** Which credential an endpoint takes. */
export type AuthKind = 'none' | 'agent' | 'user' | 'any';

/** Who made the request. */
export type Caller =
  | { kind: 'agent'; id: string; agent: AgentRecord }
  | { kind: 'user'; id: string; user: UserRecord };

const unauthorized = (message: string) => new MockError(401, 'unauthorized', message);

/** The caller of the request, checked against what the endpoint takes; 401 otherwise. */
export function authenticate(state: MockState, headers: HeaderReader, kind: AuthKind): Caller | undefined {
  if (kind === 'none') return undefined;
  const header = headers.get('authorization');
  const token = header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  if (!token) throw unauthorized('Authorization: a bearer token is required');
  const caller = state.callers.get(token);
  // The message never echoes the token: secrets stay out of errors.
  if (!caller) throw unauthorized('Authorization: the bearer token is not known');
  if (kind === 'agent' && caller.kind !== 'agent') {
    throw unauthorized('Authorization: this endpoint takes an agent token, not a user session');
  }
  if (kind === 'user' && caller.kind !== 'user') {
    throw unauthorized('Authorization: this endpoint takes a user session, not an agent token');
  }
  return caller;
}
