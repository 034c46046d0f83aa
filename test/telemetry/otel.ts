// The real OpenTelemetry SDK, as an app registers it: a tracer provider whose spans go to an
// in-memory exporter, the AsyncLocalStorage context manager (so spans made inside a handler nest
// under it), the W3C propagator (traceparent), and a meter provider read on demand.
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  type Sampler,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';

/**
 * Registers the SDK for this test file (every span sampled, unless `sampler` says otherwise);
 * `spans()` lists the ended spans, `reset()` forgets them.
 */
export function registerOtel(sampler?: Sampler) {
  const exporter = new InMemorySpanExporter();
  // Every span started and not yet ended, so a test can show that none is left open.
  const open = new Set<ReadableSpan>();
  const tracker = {
    onStart: (span: ReadableSpan) => open.add(span),
    onEnd: (span: ReadableSpan) => open.delete(span),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const provider = new TracerProvider({
    spanProcessors: [tracker as never, new SimpleSpanProcessor({ exporter })],
    ...(sampler && { sampler }),
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 3_600_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    /** The ended spans, once the processor exported them (export is asynchronous). */
    async spans(): Promise<ReadableSpan[]> {
      await provider.forceFlush();
      return exporter.getFinishedSpans();
    },
    /** The names of the spans started and not ended. */
    open: () => [...open].map((span) => span.name),
    reset: () => {
      open.clear();
      exporter.reset();
      metricExporter.reset();
    },
    /** The value of each data point of the metric `name`, with its attributes. */
    async metric(name: string) {
      await reader.forceFlush();
      const points: { value: unknown; attributes: Record<string, unknown> }[] = [];
      for (const batch of metricExporter.getMetrics()) {
        for (const scope of batch.scopeMetrics) {
          for (const m of scope.metrics) {
            if (m.descriptor.name !== name) continue;
            for (const point of m.dataPoints)
              points.push({ value: point.value, attributes: point.attributes });
          }
        }
      }
      metricExporter.reset();
      return points;
    },
    async shutdown() {
      await provider.shutdown();
      await meterProvider.shutdown();
      contextManager.disable();
      trace.disable();
      context.disable();
      propagation.disable();
      metrics.disable();
    },
  };
}

/** The spans as a tree of names, children indented under their parent, in start order. */
export function spanTree(spans: readonly ReadableSpan[]): string {
  const byParent = new Map<string | undefined, ReadableSpan[]>();
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    const key = parent && ids.has(parent) ? parent : undefined;
    byParent.set(key, [...(byParent.get(key) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    const children = (byParent.get(parent) ?? []).sort(
      (a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1],
    );
    for (const span of children) {
      lines.push(`${'  '.repeat(depth)}${span.name}`);
      walk(span.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}
