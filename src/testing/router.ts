// Routes: method, path pattern, which credential, which body schema, its retry class, and the rule
// that answers. The pipeline (service-fetch.ts) applies the checks in PROTOCOL.md's order.
import type * as z from 'zod/mini';
import { type EndpointKey, endpoints, type RetryClass } from '../endpoints.js';
import type { AuthKind, Caller } from './auth.js';
import type { LineReader } from './body.js';
import type { Fault } from './faults.js';
import { MockError } from './http.js';
import type { MockWorld } from './world.js';

/** What a rule receives about its request. */
export interface RouteContext<Body = unknown> {
  world: MockWorld;
  request: Request;
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
  replayWith?: (ctx: RouteContext) => Response;
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
  handle(ctx: RouteContext<Body>): Response | Promise<Response>;
}

/** Declares a route with its body type taken from its schema. */
export function route<S extends z.ZodMiniType = z.ZodMiniType<undefined>>(
  definition: Omit<Route<z.output<S>>, 'body'> & { body?: S },
): Route {
  return definition as unknown as Route;
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

/** The route for a request and its path parameters; 404 when no route has the path. */
export function matchRoute(
  routes: readonly Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } {
  let pathMatched = false;
  for (const candidate of routes) {
    const params = matchPath(candidate.path, path);
    if (!params) continue;
    pathMatched = true;
    if (candidate.method === method.toUpperCase()) return { route: candidate, params };
  }
  throw new MockError(
    404,
    'not_found',
    pathMatched ? `${method} is not allowed on ${path}` : `no endpoint at ${path}`,
  );
}

function matchPath(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, segment] of want.entries()) {
    const actual = got[i] ?? '';
    if (segment.startsWith(':')) {
      if (actual === '') return undefined;
      params[segment.slice(1)] = safeDecode(actual);
    } else if (segment !== actual) {
      return undefined;
    }
  }
  return params;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
