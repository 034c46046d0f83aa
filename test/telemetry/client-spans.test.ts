// Client calls traced with the real OpenTelemetry SDK: one span per call, named and attributed by the
// HTTP semantic conventions, retries as events and as a metric, and the trace carried in `traceparent`.
import { trace } from '@opentelemetry/api';
import { afterAll, describe, expect, test } from 'vitest';
import { useWorld } from '../client/world.js';
import { registerOtel } from './otel.js';

const otel = registerOtel();
afterAll(() => otel.shutdown());

const SEND_PATH = '/v1/conversations/*/messages';

describe('client calls as spans', () => {
  const w = useWorld('loopback');

  test('a send is one client span named by its method and route template, with the status it got', async () => {
    otel.reset();
    await w.client.messages.send(w.conversationId, { text: 'hello' });

    const spans = (await otel.spans()).filter((span) => span.name.startsWith('POST '));
    expect(spans.map((span) => span.name)).toEqual(['POST /v1/conversations/{conversation_id}/messages']);
    const [span] = spans;
    expect(span?.kind).toBe(2); // CLIENT
    expect(span?.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.template': '/v1/conversations/{conversation_id}/messages',
      'http.response.status_code': 201,
      'server.address': '127.0.0.1',
    });
    expect(span?.status.code).toBe(0); // UNSET: it succeeded
    // The trace went over the wire: the request carried the span's traceparent.
    const sent = w.requests().find((entry) => entry.method === 'POST');
    expect(sent?.headers.traceparent).toBe(
      `00-${span?.spanContext().traceId}-${span?.spanContext().spanId}-01`,
    );
  });

  test('a 503 then success is one span with a retry event, and the retry is counted', async () => {
    otel.reset();
    w.mock.faults.inject({ method: 'POST', path: SEND_PATH, fault: 'status', status: 503, retry_after: 0 });
    await w.client.messages.send(w.conversationId, { text: 'again' });

    const spans = (await otel.spans()).filter((span) => span.name.startsWith('POST '));
    expect(spans).toHaveLength(1);
    expect(
      spans[0]?.events.map((event) => [event.name, event.attributes?.['agent_messaging.attempt']]),
    ).toEqual([['retry', 2]]);
    expect(spans[0]?.attributes['http.response.status_code']).toBe(201);
    const retries = await otel.metric('agent_messaging.client.retries');
    expect(retries).toEqual([
      {
        value: 1,
        attributes: {
          'http.request.method': 'POST',
          'url.template': '/v1/conversations/{conversation_id}/messages',
        },
      },
    ]);
  });

  test('a call that fails ends its span with an error status and the error type', async () => {
    otel.reset();
    w.mock.faults.inject({ method: 'POST', path: SEND_PATH, fault: 'status', status: 400 });
    await expect(w.client.messages.send(w.conversationId, { text: 'bad' })).rejects.toThrow();

    const [span] = (await otel.spans()).filter((span) => span.name.startsWith('POST '));
    expect(span?.status.code).toBe(2); // ERROR
    expect(span?.attributes['http.response.status_code']).toBe(400);
    expect(span?.attributes['error.type']).toBe('BadRequestError');
  });

  test('a call made inside an active span is its child', async () => {
    otel.reset();
    await trace.getTracer('app').startActiveSpan('my-work', async (parent) => {
      await w.client.conversations.listMessages(w.conversationId);
      parent.end();
    });
    const parent = (await otel.spans()).find((span) => span.name === 'my-work');
    const child = (await otel.spans()).find((span) => span.name.startsWith('GET '));
    expect(child?.parentSpanContext?.spanId).toBe(parent?.spanContext().spanId);
  });
});
