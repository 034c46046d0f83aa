// Run: `npm run mock` in one terminal, then `npx tsx examples/traced-bot.ts` (PORT=3000 by default).
//
// A bot traced with OpenTelemetry. The SDK needs no option: with `@opentelemetry/api` installed and a
// tracer provider registered, each delivery is a span ('agent-messaging.delivery') with its
// verification, its wait for the conversation's turn, its handler, each reply and each call to the
// service under it, and your own spans (a model SDK's too) nest under the handler. Here the spans are
// printed as a tree in the terminal when a delivery's trace ends; in production, register the
// OpenTelemetry Node SDK with an OTLP exporter instead (see docs/bot.md, "Traces and metrics").

import { fileURLToPath } from 'node:url';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { type ReadableSpan, type SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { type Bot, type BotOptions, createBot } from 'agent-messaging';
import { serveBot } from './echo-bot.js';
import { chatOnMock, credentialsFromEnv, webhookUrl } from './support/try-on-mock.js';

/** One trace as an indented tree: each span's name, its duration and the attributes worth a look. */
export function traceTree(spans: readonly ReadableSpan[]): string {
  const children = new Map<string | undefined, ReadableSpan[]>();
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    const key = parent && ids.has(parent) ? parent : undefined;
    children.set(key, [...(children.get(key) ?? []), span]);
  }
  const lines: string[] = [];
  const shown = ['outcome', 'route', 'reply.transport', 'reply.outcome', 'reply.chars', 'turn.wait_ms'];
  const walk = (parent: string | undefined, depth: number) => {
    const started = (span: ReadableSpan) => span.startTime[0] * 1e3 + span.startTime[1] / 1e6;
    for (const span of (children.get(parent) ?? []).sort((a, b) => started(a) - started(b))) {
      const ms = span.duration[0] * 1e3 + span.duration[1] / 1e6;
      const attributes = shown
        .map((name) => [name, span.attributes[`agent_messaging.${name}`]] as const)
        .filter(([, value]) => value !== undefined)
        .map(([name, value]) => `${name}=${String(value)}`);
      const status = span.status.code === 2 ? ' ERROR' : '';
      lines.push(
        `${'  '.repeat(depth)}${span.name} ${ms.toFixed(1)} ms${status} ${attributes.join(' ')}`.trimEnd(),
      );
      walk(span.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}

/**
 * Registers OpenTelemetry as an app would (a tracer provider, the AsyncLocalStorage context manager
 * so spans nest across `await`, the W3C propagator for `traceparent`), with a processor that hands
 * each finished trace (once its root span ended) to `print`.
 */
export function registerTracing(print: (tree: string) => void): TracerProvider {
  const traces = new Map<string, ReadableSpan[]>();
  const printer: SpanProcessor = {
    onStart: () => {},
    onEnd: (span) => {
      const id = span.spanContext().traceId;
      traces.set(id, [...(traces.get(id) ?? []), span]);
      // A trace is printed when its delivery span ends; spans that end later (the run of a delivery
      // answered 409) start a tree of their own.
      if (span.name === 'agent-messaging.delivery') {
        print(traceTree(traces.get(id) ?? []));
        traces.delete(id);
      }
    },
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const provider = new TracerProvider({ spanProcessors: [printer] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return provider;
}

/** A bot whose handler does some traced work of its own before it streams its reply. */
export function createTracedBot(options: BotOptions): Bot {
  const bot = createBot(options);
  const tracer = trace.getTracer('traced-bot');
  bot.on('message.received', async (ctx) => {
    const topic = await tracer.startActiveSpan('look up the topic', async (span) => {
      span.setAttribute('topic.length', ctx.text.length);
      span.end();
      return ctx.text.toLowerCase();
    });
    await ctx.reply(
      (async function* () {
        yield 'You asked about ';
        yield `"${topic}". `;
        yield 'Every step of this answer is a span.';
      })(),
    );
  });
  return bot;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  registerTracing((tree) => console.log(`\nTrace of one delivery:\n${tree}\n`));
  const agent = await credentialsFromEnv('traced');
  const bot = createTracedBot(agent);
  const server = await serveBot(bot, Number(process.env.PORT ?? 3000));
  console.log(`Traced bot listening: POST ${webhookUrl(server)}`);
  await chatOnMock(bot.client, agent, webhookUrl(server), 'OpenTelemetry');
}
