// The mock carries trace context as a service that propagates it would: a user's post made with a
// `traceparent` (the control request's header, or the span active around `mock.postUserMessage`)
// reaches the agent's webhook with that `traceparent`, on every attempt.
import { trace } from '@opentelemetry/api';
import { createMockService } from 'agent-messaging/testing';
import { afterAll, describe, expect, test } from 'vitest';
import { registerOtel } from './otel.js';

const otel = registerOtel();
afterAll(() => otel.shutdown());

async function world() {
  const seen: Headers[] = [];
  const mock = createMockService({
    // The first attempt fails, so the retry shows the header too.
    fetch: async (request) => {
      seen.push(new Headers(request.headers));
      return new Response(null, { status: seen.length === 1 ? 500 : 204 });
    },
  });
  const seed = await mock.seed({ handle: 'traced_bot', webhookUrl: 'http://bot.test/webhook' });
  return { mock, seed, seen };
}

describe('trace context through the mock', () => {
  test('a control post with traceparent delivers message.received with it, retries included', async () => {
    const { mock, seed, seen } = await world();
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const answer = await mock.fetch(
      new Request(`${mock.baseUrl}/_mock/conversations/${seed.conversationId}/user-messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent },
        body: JSON.stringify({ user_id: seed.user.id, text: 'hi' }),
      }),
    );
    expect(answer.status).toBe(201);
    await mock.idle();
    await mock.clock.advance(5);
    await mock.idle();

    const received = mock.deliveries.filter((d) => d.type === 'message.received');
    expect(received.map((d) => d.status)).toEqual([500, 204]);
    expect(seen.slice(-2).map((headers) => headers.get('traceparent'))).toEqual([traceparent, traceparent]);
  });

  test('a post made inside a span carries that span as the parent; one outside a span carries none', async () => {
    const { mock, seed, seen } = await world();
    await trace.getTracer('test').startActiveSpan('user types', async (span) => {
      mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text: 'inside' });
      span.end();
    });
    await mock.idle();
    const inside = seen.at(-1)?.get('traceparent');
    const parent = (await otel.spans()).find((span) => span.name === 'user types');
    expect(inside).toBe(`00-${parent?.spanContext().traceId}-${parent?.spanContext().spanId}-01`);

    mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text: 'outside' });
    await mock.idle();
    expect(seen.at(-1)?.get('traceparent')).toBeNull();
  });
});
