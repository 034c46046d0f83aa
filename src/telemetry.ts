// The bridge to OpenTelemetry. `@opentelemetry/api` is an optional peer: it is loaded once, by
// `telemetryLoading()`, with an import whose name bundlers do not follow, so an app without it bundles
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

let api: Api | null | undefined;
let loading: Promise<void> | undefined;
// The delegate of a global tracer provider with none registered: the API's no-op provider.
let noTracerProvider: unknown;
// The instruments, and the meter provider they came from; `undefined` for the API's no-op meter.
let instruments: Record<Instrument, (value: number, attributes: OtelApi.Attributes) => void> | undefined;
let instrumentsOf: unknown;

/**
 * Loads `@opentelemetry/api` once, if it is installed: until that is known, the promise of it; then
 * `undefined`, so a delivery and a client's request await it once, on the first of them.
 * @internal
 */
export function telemetryLoading(): Promise<void> | undefined {
  if (api !== undefined) return undefined;
  loading ??= (import(/* @vite-ignore */ PEER) as Promise<Api>).then(
    (loaded) => {
      // A proxy provider that was never given a delegate answers the no-op one.
      noTracerProvider = new loaded.ProxyTracerProvider().getDelegate();
      api = loaded;
    },
    () => {
      api = null;
    },
  );
  return loading;
}

/** The namespaces of the standard semantic conventions, whose attributes keep their names. */
const STANDARD = /^(?:http|url|server|error|gen_ai|network)\./;

/** The attributes with a value, standard names as they are and the rest with the prefix. */
function named(attributes: SpanAttributes): OtelApi.Attributes {
  const out: OtelApi.Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (value !== undefined) out[STANDARD.test(key) ? key : PREFIX + key] = value;
  }
  return out;
}

/**
 * The tracer when a tracer provider is registered; `undefined` with the API absent or no provider
 * (then nothing is traced, and a caller makes nothing). Asked of the global provider each time, so a
 * provider registered later (or again, after `trace.disable()`) is used from the next span on.
 */
function activeTracer(): OtelApi.Tracer | undefined {
  if (!api) return undefined;
  const provider = api.trace.getTracerProvider() as OtelApi.TracerProvider & { getDelegate?: () => unknown };
  return provider.getDelegate?.() === noTracerProvider ? undefined : provider.getTracer(NAME);
}

/**
 * Starts a span named `name` under the context `parent` (or the active one when none is given), with
 * `attributes`; `undefined` when OpenTelemetry is absent, no provider is registered, or the span is
 * not recorded.
 * @internal
 */
export function startSpan(
  name: string,
  attributes: SpanAttributes,
  parent?: OtelApi.Context,
  kind: 'INTERNAL' | 'CLIENT' | 'SERVER' = 'INTERNAL',
): Traced | undefined {
  const traced = activeTracer();
  if (!api || !traced) return undefined;
  const parentContext = parent ?? api.context.active();
  const span = traced.startSpan(name, { kind: api.SpanKind[kind] }, parentContext);
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
  if (parent === undefined && !api?.trace.getActiveSpan()) return undefined;
  return startSpan(name, attributes, parent?.context);
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
  const getter = { get: (carrier: H, key: string) => read(carrier, key) ?? undefined, keys: () => [] };
  return startSpan(name, {}, api.propagation.extract(api.context.active(), headers, getter), 'SERVER');
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

/** The instruments, by name after the prefix: a description, and a unit for a histogram (else a counter). */
const INSTRUMENTS = {
  deliveries: ['Webhook deliveries, by outcome'],
  'handler.duration': ['How long a handler run took', 'ms'],
  'turn.wait': ["How long a message waited for its conversation's turn", 'ms'],
  replies: ['Replies, by outcome and transport'],
  'client.retries': ['Client requests sent again'],
  'order.gaps': ['Missing predecessors a message waited for, by outcome (arrived, given_up)'],
} satisfies Record<string, [string, string?]>;

/** The name of one of the bot's and the client's instruments. @internal */
export type Instrument = keyof typeof INSTRUMENTS;

/**
 * Whether a meter provider is registered (the API present and its meter not the no-op one): then a
 * delivery records its metrics whether or not its trace is sampled. @internal
 */
export function metering(): boolean {
  if (!api) return false;
  const provider = api.metrics.getMeterProvider();
  if (provider !== instrumentsOf) {
    instrumentsOf = provider;
    const meter = provider.getMeter(NAME);
    instruments = meter === api.createNoopMeter() ? undefined : makeInstruments(meter);
  }
  return instruments !== undefined;
}

/**
 * Records `value` on the instrument `name` (adds it to a counter), with `attributes` named as a
 * span's; nothing with the API absent or no meter provider registered. @internal
 */
export function recordMetric(name: Instrument, value: number, attributes: SpanAttributes = {}): void {
  if (metering()) instruments?.[name](value, named(attributes));
}

function makeInstruments(meter: OtelApi.Meter) {
  const made = {} as NonNullable<typeof instruments>;
  for (const [name, [description, unit]] of Object.entries<[string, string?]>(INSTRUMENTS)) {
    if (unit === undefined) {
      const counter = meter.createCounter(PREFIX + name, { description });
      made[name as Instrument] = (value, attributes) => counter.add(value, attributes);
    } else {
      const histogram = meter.createHistogram(PREFIX + name, { description, unit });
      made[name as Instrument] = (value, attributes) => histogram.record(value, attributes);
    }
  }
  return made;
}
