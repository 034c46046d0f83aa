// The bridge to OpenTelemetry. `@opentelemetry/api` is an optional peer: it is loaded once, by
// `loadTelemetry()`, with an import whose name bundlers do not follow, so an app without it bundles
// and runs as before and every function here answers at once with nothing. With the API present and
// no provider registered, nothing is made either: whether a tracer provider is registered is read
// from the global provider's delegate (the API's own no-op provider until one is set), and whether a
// meter provider is from the meter it hands out (the API's no-op meter), each a lookup, so a delivery
// starts no span, reads no `traceparent` and records no metric until an app registers the SDK. The
// tracer and the meter are both named 'agent-messaging' (API.md, third round).

import type * as OtelApi from '@opentelemetry/api';

type Api = typeof OtelApi;

/** The name of the tracer and of the meter. */
const NAME = 'agent-messaging';
/** The attribute prefix of this SDK's own attributes. */
const PREFIX = 'agent_messaging.';
/** Kept in a variable, so that no bundler tries to resolve the optional peer at build time. */
const PEER = '@opentelemetry/api';

/** A span and the context that holds it (for children, and for running code inside it). */
export interface Traced {
  readonly span: OtelApi.Span;
  readonly context: OtelApi.Context;
}

/** The attributes this SDK sets: its own (prefixed here) beside standard ones (given with a dot). */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

interface Instruments {
  deliveries: OtelApi.Counter;
  handlerDuration: OtelApi.Histogram;
  turnWait: OtelApi.Histogram;
  replies: OtelApi.Counter;
  retries: OtelApi.Counter;
  gaps: OtelApi.Counter;
}

let api: Api | null | undefined;
let loading: Promise<void> | undefined;
// The delegate of a global tracer provider with none registered: the API's no-op provider.
let noTracerProvider: unknown;
// The tracer named 'agent-messaging', and the global provider it came from (a provider registered
// again after `trace.disable()` is another global, so the tracer is asked for again).
let tracer: OtelApi.Tracer | undefined;
let tracerOf: unknown;
// The instruments, and the meter provider they came from; `undefined` for the API's no-op meter.
let instruments: Instruments | undefined;
let instrumentsOf: unknown;

/**
 * Loads `@opentelemetry/api` once, if it is installed; resolves when that is known. Called by
 * `createBot` and by the first request of a client, so spans start with the first delivery.
 * @internal
 */
export function loadTelemetry(): Promise<void> {
  loading ??= (import(/* @vite-ignore */ PEER) as Promise<Api>).then(
    (loaded) => {
      // A proxy provider that was never given a delegate answers the no-op one (an API without the
      // proxy class leaves this unset, and every delivery then asks its tracer instead).
      const ProxyProvider = loaded.ProxyTracerProvider as (new () => { getDelegate(): unknown }) | undefined;
      noTracerProvider = typeof ProxyProvider === 'function' ? new ProxyProvider().getDelegate() : undefined;
      api = loaded;
    },
    () => {
      api = null;
    },
  );
  return loading;
}

/**
 * Until the API's load settled, the promise of it (the load started if it had not); then `undefined`,
 * so a caller awaits it once, on its first use.
 * @internal
 */
export function telemetryLoading(): Promise<void> | undefined {
  return api === undefined ? loadTelemetry() : undefined;
}

function named(attributes: SpanAttributes): OtelApi.Attributes {
  const out: OtelApi.Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined) continue;
    out[prefixed(key)] = value;
  }
  return out;
}

/** Standard names (http., url., server., error., gen_ai.) pass as they are; the rest get the prefix. */
function prefixed(key: string): string {
  return STANDARD.some((namespace) => key.startsWith(namespace)) ? key : PREFIX + key;
}

/** The namespaces of the standard semantic conventions, whose attributes keep their names. */
const STANDARD = ['http.', 'url.', 'server.', 'error.', 'gen_ai.', 'network.'];

/**
 * The tracer when a tracer provider is registered; `undefined` with the API absent or no provider
 * (then nothing is traced, and a caller makes nothing).
 */
function activeTracer(): OtelApi.Tracer | undefined {
  if (!api) return undefined;
  const provider = api.trace.getTracerProvider() as OtelApi.TracerProvider & { getDelegate?: () => unknown };
  if (noTracerProvider !== undefined && provider.getDelegate?.() === noTracerProvider) return undefined;
  if (provider !== tracerOf) {
    tracerOf = provider;
    tracer = provider.getTracer(NAME);
  }
  return tracer;
}

/**
 * Starts a span named `name` under `parent` (or under the active context when none is given), with
 * `attributes`; `undefined` when OpenTelemetry is absent, no provider is registered, or the span is
 * not recorded.
 * @internal
 */
export function startSpan(
  name: string,
  attributes: SpanAttributes,
  parent?: Traced | OtelApi.Context,
  kind?: 'client' | 'server',
): Traced | undefined {
  const traced = activeTracer();
  if (!api || !traced) return undefined;
  const parentContext =
    parent === undefined ? api.context.active() : 'span' in parent ? parent.context : parent;
  const span = traced.startSpan(
    name,
    {
      kind:
        kind === 'client'
          ? api.SpanKind.CLIENT
          : kind === 'server'
            ? api.SpanKind.SERVER
            : api.SpanKind.INTERNAL,
    },
    parentContext,
  );
  // No provider registered (the API's no-op tracer), or sampled out: nothing under it is recorded
  // either, so the caller skips its children, its context and its attributes altogether.
  if (!span.isRecording()) return undefined;
  span.setAttributes(named(attributes));
  return { span, context: api.trace.setSpan(parentContext, span) };
}

/**
 * {@link startSpan} for a step inside a delivery (its verification, turn, handler, a reply): under
 * `parent`, or under the active span, and never a trace of its own, so nothing is made for a delivery
 * whose own span is not recorded. @internal
 */
export function childSpan(name: string, attributes: SpanAttributes, parent?: Traced): Traced | undefined {
  if (!api) return undefined;
  if (parent === undefined && (!activeTracer() || api.trace.getSpan(api.context.active()) === undefined)) {
    return undefined;
  }
  return startSpan(name, attributes, parent);
}

/** Sets more attributes on a span (the same naming as {@link startSpan}). @internal */
export function annotate(traced: Traced | undefined, attributes: SpanAttributes): void {
  traced?.span.setAttributes(named(attributes));
}

/** Adds an event to a span. @internal */
export function spanEvent(traced: Traced | undefined, name: string, attributes: SpanAttributes = {}): void {
  traced?.span.addEvent(name, named(attributes));
}

/**
 * Ends a span: with an error status when `error` is given (a throw, an abort, an interruption, a
 * timeout), recorded as an exception, else with its status unset (OK is left to the caller's reader).
 * @internal
 */
export function endSpan(traced: Traced | undefined, error?: unknown): void {
  if (!traced || !api) return;
  if (error !== undefined) {
    const message = error instanceof Error ? error.message : String(error);
    traced.span.setStatus({ code: api.SpanStatusCode.ERROR, message });
    if (error instanceof Error) traced.span.recordException(error);
    traced.span.setAttribute('error.type', error instanceof Error ? error.name : 'Error');
  }
  traced.span.end();
}

// The handler span of each running context, so the router can name the route it took.
const handlerSpans = new WeakMap<object, Traced>();

/** Remembers `traced` as the span of `key` (a handler's context). @internal */
export function bindSpan(key: object, traced: Traced | undefined): void {
  if (traced) handlerSpans.set(key, traced);
}

/** Sets attributes on the span bound to `key`, if any (the route a context took). @internal */
export function annotateBound(key: object, attributes: SpanAttributes): void {
  if (api) annotate(handlerSpans.get(key), attributes);
}

// Recoveries recorded on each span (a reply's), for its `reply.recoveries` attribute.
const recoveries = new WeakMap<OtelApi.Span, number>();

/** Records a recovery (an event) on the active span: a reply's writer read back and went on. @internal */
export function recordRecovery(attributes: SpanAttributes): void {
  const span = api?.trace.getActiveSpan();
  if (!span) return;
  span.addEvent('recovery', named(attributes));
  recoveries.set(span, (recoveries.get(span) ?? 0) + 1);
}

/** How many recoveries were recorded on `traced`. @internal */
export const recoveriesOf = (traced: Traced | undefined): number =>
  traced ? (recoveries.get(traced.span) ?? 0) : 0;

/** Sets attributes on the active span (a reply's transport, known to its writer). @internal */
export function annotateActive(attributes: SpanAttributes): void {
  api?.trace.getActiveSpan()?.setAttributes(named(attributes));
}

/** Runs `fn` with `traced` as the active span, so spans made inside it (the author's too) nest under it. @internal */
export function inSpan<T>(traced: Traced | undefined, fn: () => T): T {
  return traced && api ? api.context.with(traced.context, fn) : fn();
}

/**
 * Starts the span of a request served here (a webhook's delivery), continuing the trace of the
 * `traceparent` (and `tracestate`) it carries through the registered propagator; `read` answers a
 * header of `headers`. `undefined`, with no header read, when nothing is traced.
 * @internal
 */
export function startServerSpan<H>(
  name: string,
  headers: H,
  read: (headers: H, name: string) => string | null | undefined,
): Traced | undefined {
  if (!api || !activeTracer()) return undefined;
  const traceparent = read(headers, 'traceparent');
  if (!traceparent) return startSpan(name, {}, undefined, 'server');
  const carrier: Record<string, string> = { traceparent };
  const tracestate = read(headers, 'tracestate');
  if (tracestate) carrier.tracestate = tracestate;
  return startSpan(name, {}, api.propagation.extract(api.context.active(), carrier), 'server');
}

/** Adds `traceparent` (through the registered propagator) to an outgoing request's headers. @internal */
export function injectContext(traced: Traced | undefined, headers: Record<string, string>): void {
  if (traced && api) api.propagation.inject(traced.context, headers);
}

/**
 * The `traceparent` of the active span, when there is one (the mock stamps it on the webhook of a
 * message posted inside a span, as a service that propagates trace context would). @internal
 */
export function activeTraceparent(): string | undefined {
  if (!api) return undefined;
  const carrier: Record<string, string> = {};
  api.propagation.inject(api.context.active(), carrier);
  return carrier.traceparent;
}

/** The instruments of the registered meter provider; `undefined` with the API absent or no provider. */
function meters(): Instruments | undefined {
  if (!api) return undefined;
  const provider = api.metrics.getMeterProvider();
  if (provider === instrumentsOf) return instruments;
  instrumentsOf = provider;
  const meter = provider.getMeter(NAME);
  instruments = meter === api.createNoopMeter?.() ? undefined : makeInstruments(meter);
  return instruments;
}

function makeInstruments(meter: OtelApi.Meter): Instruments {
  return {
    deliveries: meter.createCounter(`${PREFIX}deliveries`, { description: 'Webhook deliveries, by outcome' }),
    handlerDuration: meter.createHistogram(`${PREFIX}handler.duration`, {
      description: 'How long a handler run took',
      unit: 'ms',
    }),
    turnWait: meter.createHistogram(`${PREFIX}turn.wait`, {
      description: "How long a message waited for its conversation's turn",
      unit: 'ms',
    }),
    replies: meter.createCounter(`${PREFIX}replies`, { description: 'Replies, by outcome and transport' }),
    retries: meter.createCounter(`${PREFIX}client.retries`, { description: 'Client requests sent again' }),
    gaps: meter.createCounter(`${PREFIX}order.gaps`, {
      description: 'Missing predecessors a message waited for, by outcome (arrived, given_up)',
    }),
  };
}

/** The bot's and the client's measurements (no-ops without OpenTelemetry). @internal */
export const metric = {
  delivery(outcome: string, eventType: string | undefined): void {
    meters()?.deliveries.add(1, {
      'agent_messaging.outcome': outcome,
      ...(eventType === undefined ? {} : { 'agent_messaging.event.type': eventType }),
    });
  },
  handler(ms: number, outcome: string): void {
    meters()?.handlerDuration.record(ms, { 'agent_messaging.outcome': outcome });
  },
  turnWait(ms: number): void {
    meters()?.turnWait.record(ms);
  },
  reply(outcome: string, transport: string): void {
    meters()?.replies.add(1, {
      'agent_messaging.reply.outcome': outcome,
      'agent_messaging.reply.transport': transport,
    });
  },
  retry(method: string, route: string): void {
    meters()?.retries.add(1, { 'http.request.method': method, 'url.template': route });
  },
  gap(outcome: 'arrived' | 'given_up'): void {
    meters()?.gaps.add(1, { 'agent_messaging.outcome': outcome });
  },
};
