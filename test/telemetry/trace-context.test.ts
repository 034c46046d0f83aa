// The trace reaches past the bot on both sides: a webhook's `traceparent` is continued by its delivery
// span, the author's own spans nest under the handler, and so do a model SDK's GenAI spans (the AI SDK
// with its OpenTelemetry integration, against the fake model server).
import { createOpenAI } from '@ai-sdk/openai';
import { OpenTelemetry } from '@ai-sdk/otel';
import { trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { createFakeModelServer } from 'agent-messaging/testing';
import { registerTelemetry, streamText } from 'ai';
import { afterAll, beforeEach, describe, expect, test } from 'vitest';
import { createLoop, replay, signedRequest } from '../webhooks/harness.js';
import { registerOtel } from './otel.js';

const otel = registerOtel();
afterAll(() => otel.shutdown());
beforeEach(() => otel.reset());

const byName = (spans: readonly ReadableSpan[], name: string) => spans.find((span) => span.name === name);
const parentOf = (span: ReadableSpan | undefined) => span?.parentSpanContext?.spanId;

describe('trace context', () => {
  test("a delivery carrying traceparent continues the sender's trace", async () => {
    const loop = await createLoop();
    loop.bot.on('message.received', (ctx) => ctx.reply('traced'));
    loop.record();
    await loop.post('hi');
    const [recorded] = loop.recorded;
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const request = await signedRequest(recorded!.body, loop.secret, {
      headers: { traceparent: `00-${traceId}-${parentId}-01` },
    });
    otel.reset();
    expect((await loop.bot.fetch(request)).status).toBe(200);
    await loop.bot.idle();

    const spans = await otel.spans();
    const delivery = byName(spans, 'agent-messaging.delivery');
    expect(delivery?.spanContext().traceId).toBe(traceId);
    expect(parentOf(delivery)).toBe(parentId);
    // Everything after it is in the same trace.
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([traceId]));
    // Without the header, a delivery starts a trace of its own.
    otel.reset();
    const plain = replay(recorded!);
    await loop.bot.fetch(plain);
    expect(byName(await otel.spans(), 'agent-messaging.delivery')?.spanContext().traceId).not.toBe(traceId);
  });

  test("the author's own spans in a handler are children of the handler span", async () => {
    const loop = await createLoop();
    loop.bot.on('message.received', async (ctx) => {
      await trace.getTracer('my-bot').startActiveSpan('look up the order', async (span) => {
        await ctx.reply('found it');
        span.end();
      });
    });
    otel.reset();
    await loop.post('where is my order?');
    await loop.bot.idle();

    const spans = await otel.spans();
    const handler = byName(spans, 'agent-messaging.handler');
    const own = byName(spans, 'look up the order');
    expect(parentOf(own)).toBe(handler?.spanContext().spanId);
    expect(parentOf(byName(spans, 'agent-messaging.reply'))).toBe(own?.spanContext().spanId);
  });

  test('an AI SDK streamText call in a handler, its telemetry on, nests under the delivery; the reply says which system answered', async () => {
    const model = await createFakeModelServer({ text: 'It is sunny in Oslo.' });
    registerTelemetry(new OpenTelemetry());
    const aiSdk = createOpenAI({ apiKey: 'sk-test', baseURL: model.openaiBaseUrl });
    try {
      const loop = await createLoop();
      loop.bot.on('message.received', (ctx) =>
        ctx.reply(streamText({ model: aiSdk.chat('gpt-test'), prompt: ctx.text, onError: () => {} })),
      );
      otel.reset();
      await loop.post('Weather in Oslo?');
      await loop.bot.idle();

      const spans = await otel.spans();
      const delivery = byName(spans, 'agent-messaging.delivery');
      const modelSpans = spans.filter((span) => span.attributes['gen_ai.operation.name'] !== undefined);
      expect(modelSpans.length).toBeGreaterThan(0);
      // Each of the model's spans is in the delivery's trace, under its handler.
      const ids = new Map(spans.map((span) => [span.spanContext().spanId, span]));
      for (const span of modelSpans) {
        expect(span.spanContext().traceId).toBe(delivery?.spanContext().traceId);
        let up: ReadableSpan | undefined = span;
        while (up && up.name !== 'agent-messaging.handler') up = ids.get(parentOf(up) ?? '');
        expect(up?.name).toBe('agent-messaging.handler');
      }
      const reply = byName(spans, 'agent-messaging.reply');
      expect(reply?.attributes['agent_messaging.reply.source']).toBe('ai-sdk');
      expect(reply?.attributes['agent_messaging.reply.chars']).toBe('It is sunny in Oslo.'.length);
    } finally {
      await model.close();
    }
  });
});
