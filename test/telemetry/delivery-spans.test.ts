// One trace from webhook to reply, on the real OpenTelemetry SDK: a span per delivery with its
// verification, its turn, its handler, each reply and each client call under it; the outcome of every
// decision as attributes; every span ended, with an error status where the run failed or was cut.
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeEach, describe, expect, test } from 'vitest';
import { createLoop, gate, replay } from '../webhooks/harness.js';
import { registerOtel, spanTree } from './otel.js';

const otel = registerOtel();
afterAll(() => otel.shutdown());
beforeEach(() => otel.reset());

const named = (spans: readonly ReadableSpan[], name: string) => spans.filter((span) => span.name === name);
const one = (spans: readonly ReadableSpan[], name: string) => {
  const found = named(spans, name);
  expect(found, name).toHaveLength(1);
  return found[0] as ReadableSpan;
};
const ERROR = 2;

async function* words(...parts: string[]) {
  for (const part of parts) yield part;
}

describe('a delivery traced from receipt to reply', () => {
  test('a message answered by a streamed reply is one tree: delivery > verify, turn, handler > reply > calls', async () => {
    const loop = await createLoop();
    loop.bot.on('message.received', (ctx) => ctx.reply(words('Hello', ', ', 'world')));
    otel.reset();
    const message = await loop.post('hi');
    await loop.bot.idle();

    const spans = await otel.spans();
    const tree = spanTree(spans);
    expect(tree).toBe(
      [
        'agent-messaging.delivery',
        '  agent-messaging.verify',
        '  agent-messaging.turn',
        '  agent-messaging.handler',
        '    GET /v1/conversations/{conversation_id}', // is it a group? (asked once per conversation)
        '    agent-messaging.reply',
        '      POST /v1/conversations/{conversation_id}/typing',
        '      POST /v1/conversations/{conversation_id}/messages',
        '      POST /v1/conversations/{conversation_id}/typing',
      ].join('\n'),
    );
    const delivery = one(spans, 'agent-messaging.delivery');
    expect(delivery.kind).toBe(1); // SERVER
    expect(delivery.attributes).toMatchObject({
      'agent_messaging.webhook.id': expect.stringMatching(/^evt_/),
      'agent_messaging.event.type': 'message.received',
      'agent_messaging.conversation.id': loop.conversationId,
      'agent_messaging.outcome': 'ran',
      'http.response.status_code': 200,
    });
    expect(one(spans, 'agent-messaging.turn').attributes['agent_messaging.turn.wait_ms']).toEqual(
      expect.any(Number),
    );
    expect(one(spans, 'agent-messaging.handler').attributes).toMatchObject({
      'agent_messaging.route': 'message.received',
      'agent_messaging.outcome': 'ok',
      'agent_messaging.messages': 1,
    });
    const reply = one(spans, 'agent-messaging.reply');
    expect(reply.attributes).toMatchObject({
      'agent_messaging.reply.transport': 'stream',
      'agent_messaging.reply.outcome': 'complete',
      'agent_messaging.reply.chars': 'Hello, world'.length,
      'agent_messaging.reply.recoveries': 0,
    });
    expect(reply.attributes['agent_messaging.reply.time_to_first_token_ms']).toEqual(expect.any(Number));
    // The reply's own request carries the trace to the service.
    const start = loop.requests({ method: 'POST', path: /\/messages$/ }).at(-1);
    expect(start?.headers.traceparent).toContain(delivery.spanContext().traceId);
    expect(spans.every((span) => span.status.code !== ERROR)).toBe(true);
    expect(otel.open()).toEqual([]);
    expect(message.id).toMatch(/^msg_/);
    const outcomes = await otel.metric('agent_messaging.deliveries');
    expect(outcomes).toContainEqual({
      value: 1,
      attributes: { 'agent_messaging.outcome': 'ran', 'agent_messaging.event.type': 'message.received' },
    });
  });

  test('a duplicate delivery is a span of its own with outcome duplicate, and no handler runs', async () => {
    const loop = await createLoop();
    loop.bot.on('message.received', (ctx) => ctx.reply('once'));
    loop.record();
    await loop.post('hi');
    const [delivery] = loop.recorded;
    expect((await loop.bot.fetch(replay(delivery!))).status).toBe(200);
    await loop.bot.idle();
    otel.reset();

    const again = await loop.bot.fetch(replay(delivery!));
    expect(await again.json()).toMatchObject({ duplicate: true });
    const spans = await otel.spans();
    expect(spanTree(spans)).toBe(
      'agent-messaging.delivery\n  agent-messaging.verify\n  agent-messaging.turn',
    );
    expect(one(spans, 'agent-messaging.delivery').attributes['agent_messaging.outcome']).toBe('duplicate');
    expect(one(spans, 'agent-messaging.turn').attributes['agent_messaging.outcome']).toBe('done');
    expect(otel.open()).toEqual([]);
  });

  test('a 409 past ackTimeoutMs, then the retry: in_flight, then duplicate once the run succeeded', async () => {
    const loop = await createLoop({ ackTimeoutMs: 1000 });
    const release = gate();
    loop.bot.on('message.received', async (ctx) => {
      await release.opened;
      await ctx.reply('done at last');
    });
    otel.reset();
    await loop.post('slow');
    const first = loop.mock.deliveries.filter((d) => d.type === 'message.received');
    expect(first.map((d) => d.status)).toEqual([409]);
    release.open();
    await loop.bot.idle();
    await loop.mock.clock.advance(5);
    await loop.mock.idle();

    const deliveries = named(await otel.spans(), 'agent-messaging.delivery');
    expect(deliveries.map((span) => span.attributes['agent_messaging.outcome'])).toEqual([
      'in_flight',
      'duplicate',
    ]);
    expect(deliveries.map((span) => span.attributes['http.response.status_code'])).toEqual([409, 200]);
    // The run is the first delivery's, and it ended after that delivery's answer.
    const handler = one(await otel.spans(), 'agent-messaging.handler');
    expect(handler.parentSpanContext?.spanId).toBe(deliveries[0]?.spanContext().spanId);
    expect(handler.attributes['agent_messaging.outcome']).toBe('ok');
    expect(otel.open()).toEqual([]);
  });

  test('a handler that throws: its span has an error status and the exception, the delivery failed (500)', async () => {
    const loop = await createLoop();
    loop.bot.onError(() => {});
    loop.bot.command('/boom', () => {
      throw new Error('the handler broke');
    });
    otel.reset();
    await loop.post('/boom');
    await loop.bot.idle();

    const spans = await otel.spans();
    const handler = one(spans, 'agent-messaging.handler');
    expect(handler.status).toMatchObject({ code: ERROR, message: 'the handler broke' });
    expect(handler.attributes['agent_messaging.route']).toBe('command /boom');
    expect(handler.events.map((event) => event.name)).toContain('exception');
    const delivery = named(spans, 'agent-messaging.delivery')[0];
    expect(delivery?.attributes).toMatchObject({
      'agent_messaging.outcome': 'failed',
      'http.response.status_code': 500,
    });
    expect(delivery?.status.code).toBe(ERROR);
    expect(otel.open()).toEqual([]);
  });

  test('an interrupted reply: the reply and the handler end with an error status, the newer message runs', async () => {
    const loop = await createLoop({ concurrency: 'interrupt' });
    const firstChunkSent = gate();
    loop.bot.on('message.received', (ctx) => {
      if (ctx.text !== 'first') return ctx.reply('second answer');
      return ctx.reply(
        (async function* () {
          yield 'partial answer';
          firstChunkSent.open();
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
          yield ' never sent';
        })(),
      );
    });
    otel.reset();
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'first' });
    await firstChunkSent.opened;
    await loop.post('second');
    await loop.mock.idle();
    await loop.bot.idle();

    const spans = await otel.spans();
    const replies = named(spans, 'agent-messaging.reply');
    const outcomes = replies.map((span) => span.attributes['agent_messaging.reply.outcome']).sort();
    expect(outcomes).toEqual(['complete', 'interrupted']);
    const cut = replies.find((span) => span.attributes['agent_messaging.reply.outcome'] === 'interrupted');
    expect(cut?.status.code).toBe(ERROR);
    const handlers = named(spans, 'agent-messaging.handler');
    const interrupted = handlers.find(
      (span) => span.attributes['agent_messaging.outcome'] === 'InterruptedError',
    );
    expect(interrupted?.status.code).toBe(ERROR);
    expect(otel.open()).toEqual([]);
  });

  test('a reply recovered after its stream was cut records the recovery', async () => {
    const loop = await createLoop();
    loop.bot.on('message.received', (ctx) =>
      ctx.reply(words(...Array.from({ length: 40 }, (_, i) => `word ${i} `.padEnd(40, '.'))), {}),
    );
    loop.mock.faults.inject({ path: '/v1/conversations/*/messages', fault: 'cut_stream', after_events: 1 });
    otel.reset();
    await loop.post('tell me a long story');
    await loop.bot.idle();

    const reply = one(await otel.spans(), 'agent-messaging.reply');
    expect(reply.attributes['agent_messaging.reply.outcome']).toBe('complete');
    expect(reply.attributes['agent_messaging.reply.recoveries']).toBeGreaterThanOrEqual(1);
    expect(reply.attributes['agent_messaging.reply.transport']).toBe('append');
    expect(reply.events.map((event) => event.name)).toContain('recovery');
    const [answer] = await loop.agentMessages();
    expect(answer?.status).toBe('sent');
    expect(otel.open()).toEqual([]);
  });
});
