// Routes: method, path pattern, which credential, which body schema, its retry class, and the rule
// that answers. The entry (service.ts) applies the checks in PROTOCOL.md's order.
import * as z from 'zod/mini';
import { type CallerKind, type EndpointKey, endpoints, type RetryClass } from '../endpoints.js';
import type { FaultSpec } from '../schemas/mock-control.js';
import type { Caller, CallerOf } from './access.js';
import type { LineReader } from './body.js';
import { type Answer, MockError, type MockRequest } from './http.js';
import type { MockWorld } from './state.js';

/** What a rule receives about its request; `C` is the caller its endpoint takes. */
export interface RouteContext<Body = unknown, C extends Caller | undefined = Caller | undefined> {
  world: MockWorld;
  /** The request as the entry read it: its headers, its body (a rule that reads it itself), its signal. */
  request: MockRequest;
  params: Record<string, string>;
  caller: C;
  body: Body;
  /** The fault matched by this request, if any (cut_stream is the rule's to apply). */
  fault: FaultSpec | undefined;
  /** The rest of a streamed NDJSON body, after its first line. */
  lines: LineReader | undefined;
  /** A rule whose answer cannot be stored as JSON (a stream) says how to replay it. */
  replayWith?: (ctx: RouteContext) => Answer;
}

/** One endpoint. */
export interface Route<Body = unknown, C extends Caller | undefined = Caller | undefined> {
  method: string;
  path: string;
  /** The path split at `/` once; a `:name` segment is a parameter. */
  segments: readonly string[];
  auth: CallerKind;
  /** The strict request schema of the JSON body (NO_BODY when the endpoint takes none). */
  body: z.ZodMiniType<Body>;
  /** The endpoint's key in the table (endpoints.ts); absent for the control surface. */
  key?: EndpointKey;
  /** `keyed`: the mock deduplicates the request by its `Idempotency-Key` (endpoints.ts). */
  retry?: RetryClass;
  /** True for the one endpoint that takes an NDJSON streamed body. */
  acceptsNdjson?: boolean;
  handle(ctx: RouteContext<Body, C>): Answer | Promise<Answer>;
}

/** The body schema of an endpoint that takes none: nothing, or an empty JSON object. */
const NO_BODY: z.ZodMiniType<Record<string, never>> = z.strictObject({});

/** A route of the control surface under `/_mock` (no credential), its body typed by its schema. */
export function control<S extends z.ZodMiniType = typeof NO_BODY>(
  method: string,
  path: string,
  handle: Route<z.output<S>>['handle'],
  body?: S,
): Route {
  return { method, path, segments: path.split('/'), auth: 'none', body: body ?? NO_BODY, handle } as Route;
}

/**
 * Registers the rule of the endpoint `key`: method, path, caller kind, body schema and retry class
 * come from the endpoint table, so the mock and the client cannot drift apart. `body` replaces the
 * shared schema where the rule must read more than it lets through.
 */
export function endpoint<K extends EndpointKey, S extends z.ZodMiniType = EndpointBody<K>>(
  key: K,
  rule: Pick<Route<z.output<S>, CallerOf<(typeof endpoints)[K]['caller']>>, 'acceptsNdjson' | 'handle'> & {
    body?: S;
  },
): Route {
  const { method, path, caller, retry, ...schemas } = endpoints[key];
  const body = rule.body ?? ('request' in schemas ? schemas.request : NO_BODY);
  return { key, method, path, segments: path.split('/'), auth: caller, retry, ...rule, body } as Route;
}

type EndpointBody<K extends EndpointKey> = (typeof endpoints)[K] extends {
  request: infer S extends z.ZodMiniType;
}
  ? S
  : typeof NO_BODY;

/** The route for a request and its path parameters; 404 when no route has the path. */
export function matchRoute(
  routes: readonly Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } {
  const got = path.split('/');
  const wanted = method.toUpperCase();
  let pathMatched = false;
  for (const route of routes) {
    const params = paramsOf(route.segments, got);
    if (!params) continue;
    pathMatched = true;
    if (route.method === wanted) return { route, params };
  }
  throw new MockError(
    404,
    'not_found',
    pathMatched ? `${method} is not allowed on ${path}` : `no endpoint at ${path}`,
  );
}

/** The parameters when literal segments are equal and parameter segments not empty; else undefined. */
function paramsOf(segments: readonly string[], got: readonly string[]): Record<string, string> | undefined {
  if (segments.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (segment[0] === ':') {
      if (got[i] === '') return undefined;
      params[segment.slice(1)] = safeDecode(got[i]!);
    } else if (segment !== got[i]) return undefined;
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
