// Routes: method, path pattern, which credential, which body schema, its retry class, and the rule
// that answers. The entry (service.ts) applies the checks in PROTOCOL.md's order.
import type * as z from 'zod/mini';
import { type EndpointKey, endpoints, type RetryClass } from '../endpoints.js';
import type { AuthKind, Caller } from './access.js';
import type { LineReader } from './body.js';
import type { Fault } from './faults.js';
import { type Answer, MockError, type MockRequest } from './http.js';
import type { MockWorld } from './state.js';

/** What a rule receives about its request. */
export interface RouteContext<Body = unknown> {
  world: MockWorld;
  /** The request as the entry read it: its headers, its body (a rule that reads it itself), its signal. */
  request: MockRequest;
  url: URL;
  params: Record<string, string>;
  caller: Caller | undefined;
  body: Body;
  /** `scheme://host` of the request, for absolute URLs that work on every door. */
  origin: string;
  /** The fault matched by this request, if any (cut_stream is the rule's to apply). */
  fault: Fault | undefined;
  /** The rest of a streamed NDJSON body, after its first line. */
  lines: LineReader | undefined;
  /** A rule whose answer cannot be stored as JSON (a stream) says how to replay it. */
  replayWith?: (ctx: RouteContext) => Answer;
}

/** One endpoint. */
export interface Route<Body = unknown> {
  method: string;
  path: string;
  auth: AuthKind;
  /** The strict request schema of the JSON body; absent when the endpoint takes none. */
  body?: z.ZodMiniType<Body>;
  /** The endpoint's key in the table (endpoints.ts); absent for the control surface. */
  key?: EndpointKey;
  /** `keyed`: the mock deduplicates the request by its `Idempotency-Key` (endpoints.ts). */
  retry?: RetryClass;
  /** True for the one endpoint that takes an NDJSON streamed body. */
  acceptsNdjson?: boolean;
  handle(ctx: RouteContext<Body>): Answer | Promise<Answer>;
}

/** A route of the control surface under `/_mock` (no credential), its body typed by its schema. */
export function control<S extends z.ZodMiniType = z.ZodMiniType<undefined>>(
  method: string,
  path: string,
  handle: Route<z.output<S>>['handle'],
  body?: S,
): Route {
  return { method, path, auth: 'none', body, handle } as unknown as Route;
}

/** What a rule of the service adds to its endpoint's entry in the table. */
type Rule<S extends z.ZodMiniType> = Pick<Route<z.output<S>>, 'acceptsNdjson' | 'handle'> & {
  /** A body schema of the mock's own, where it must read more than the shared one lets through. */
  body?: S;
};

/**
 * Registers the rule of the endpoint `key`: method, path, caller kind, body schema and retry class
 * come from the endpoint table, so the mock and the client cannot drift apart.
 */
export function endpoint<K extends EndpointKey, S extends z.ZodMiniType = EndpointBody<K>>(
  key: K,
  rule: Rule<S>,
): Route {
  const { method, path, caller, retry, ...schemas } = endpoints[key];
  const body = rule.body ?? ('request' in schemas ? schemas.request : undefined);
  return { key, method, path, auth: caller, retry, ...rule, body } as unknown as Route;
}

type EndpointBody<K extends EndpointKey> = (typeof endpoints)[K] extends {
  request: infer S extends z.ZodMiniType;
}
  ? S
  : z.ZodMiniType<undefined>;

/** A route's path pattern split once: each segment, and the parameter name where it is one. */
interface CompiledRoute {
  route: Route;
  segments: readonly string[];
  params: readonly (string | undefined)[];
}

// Each table is compiled the first time it is matched against, not on every request.
const compiledTables = new WeakMap<readonly Route[], readonly CompiledRoute[]>();

function compiled(routes: readonly Route[]): readonly CompiledRoute[] {
  let table = compiledTables.get(routes);
  if (!table) {
    table = routes.map((route) => {
      const segments = route.path.split('/');
      const params = segments.map((segment) => (segment.startsWith(':') ? segment.slice(1) : undefined));
      return { route, segments, params };
    });
    compiledTables.set(routes, table);
  }
  return table;
}

/** The route for a request and its path parameters; 404 when no route has the path. */
export function matchRoute(
  routes: readonly Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } {
  const got = path.split('/');
  const wanted = method.toUpperCase();
  let pathMatched = false;
  for (const candidate of compiled(routes)) {
    if (!pathMatches(candidate, got)) continue;
    pathMatched = true;
    if (candidate.route.method === wanted)
      return { route: candidate.route, params: paramsOf(candidate, got) };
  }
  throw new MockError(
    404,
    'not_found',
    pathMatched ? `${method} is not allowed on ${path}` : `no endpoint at ${path}`,
  );
}

/** Literal segments equal, parameter segments not empty. */
function pathMatches({ segments, params }: CompiledRoute, got: readonly string[]): boolean {
  if (segments.length !== got.length) return false;
  for (let i = 0; i < segments.length; i++) {
    if (params[i] === undefined ? segments[i] !== got[i] : got[i] === '') return false;
  }
  return true;
}

function paramsOf({ params }: CompiledRoute, got: readonly string[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (let i = 0; i < params.length; i++) {
    const name = params[i];
    if (name !== undefined) values[name] = safeDecode(got[i]!);
  }
  return values;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
