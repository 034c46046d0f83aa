import { type MessageStartedEvent, schemas } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { errorOf, newKey, setupScenario, textSend } from './helpers.js';
import { EventReader, jsonStreamingSend, streamingSend } from './stream-helpers.js';

// The wire schemas as values, from the public namespace.
const { ListMessagesResponse } = schemas;

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, call, baseUrl } = useDoor(door);

  describe('fault injection', () => {
    it('status: answers that error before doing anything, with the default code and Retry-After when given', async () => {
      const s = await setupScenario(mock);
      mock.faults.inject({
        method: 'POST',
        path: '/v1/conversations/*/messages',
        fault: 'status',
        status: 503,
        retry_after: 7,
      });
      const path = `/v1/conversations/${s.conversationId}/messages`;
      const failed = await call('POST', path, {
        token: s.apiKey,
        idempotencyKey: newKey(),
        body: textSend('hi'),
      });
      expect(failed.status).toBe(503);
      expect(errorOf(failed).code).toBe('unavailable');
      expect(failed.headers.get('retry-after')).toBe('7');
      expect(failed.headers.get('request-id')).toMatch(/^req_/);
      const history = ListMessagesResponse.parse((await call('GET', path, { token: s.apiKey })).body);
      expect(history.messages).toHaveLength(0);
      // times defaults to 1: the next request goes through.
      expect(
        (await call('POST', path, { token: s.apiKey, idempotencyKey: newKey(), body: textSend('hi') }))
          .status,
      ).toBe(201);
    });

    it('status: uses a given code, omits Retry-After without retry_after, and is never stored for the key', async () => {
      const s = await setupScenario(mock);
      mock.faults.inject({
        path: '/v1/conversations/*/messages',
        fault: 'status',
        status: 429,
        code: 'slow_down',
      });
      const path = `/v1/conversations/${s.conversationId}/messages`;
      const key = newKey();
      const limited = await call('POST', path, {
        token: s.apiKey,
        idempotencyKey: key,
        body: textSend('hi'),
      });
      expect(limited.status).toBe(429);
      expect(errorOf(limited).code).toBe('slow_down');
      expect(limited.headers.get('retry-after')).toBeNull();
      const retried = await call('POST', path, {
        token: s.apiKey,
        idempotencyKey: key,
        body: textSend('hi'),
      });
      expect(retried.status).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
    });

    it('matches the path segment by segment, `*` standing for exactly one segment, and counts `times`', async () => {
      const s = await setupScenario(mock);
      mock.faults.inject({
        method: 'GET',
        path: '/v1/conversations/*',
        fault: 'status',
        status: 500,
        times: 2,
      });
      const history = await call('GET', `/v1/conversations/${s.conversationId}/messages`, {
        token: s.apiKey,
      });
      expect(history.status).toBe(200);
      expect((await call('GET', `/v1/conversations/${s.conversationId}`, { token: s.apiKey })).status).toBe(
        500,
      );
      expect((await call('GET', `/v1/conversations/${s.conversationId}`, { token: s.apiKey })).status).toBe(
        500,
      );
      expect((await call('GET', `/v1/conversations/${s.conversationId}`, { token: s.apiKey })).status).toBe(
        200,
      );
    });

    it('applies the oldest of several matching faults, and clear() removes them all', async () => {
      const s = await setupScenario(mock);
      mock.faults.inject({ path: '/v1/conversations/*', fault: 'status', status: 500 });
      mock.faults.inject({ path: '/v1/conversations/*', fault: 'status', status: 503 });
      mock.faults.inject({ path: '/v1/conversations/*', fault: 'status', status: 502 });
      expect((await call('GET', `/v1/conversations/${s.conversationId}`, { token: s.apiKey })).status).toBe(
        500,
      );
      expect((await call('GET', `/v1/conversations/${s.conversationId}`, { token: s.apiKey })).status).toBe(
        503,
      );
      mock.faults.clear();
      expect((await call('GET', `/v1/conversations/${s.conversationId}`, { token: s.apiKey })).status).toBe(
        200,
      );
    });

    it('logs the request on arrival even when a fault answers it', async () => {
      const s = await setupScenario(mock);
      mock.faults.inject({ path: '/v1/conversations/*', fault: 'status', status: 500 });
      await call('GET', `/v1/conversations/${s.conversationId}`, { token: s.apiKey });
      expect(mock.requests.at(-1)).toMatchObject({
        method: 'GET',
        path: `/v1/conversations/${s.conversationId}`,
      });
    });

    it('drop_after_commit: does the work and stores it under the key, but the client gets a network error', async () => {
      const s = await setupScenario(mock);
      mock.faults.inject({ path: '/v1/conversations/*/messages', fault: 'drop_after_commit' });
      const path = `/v1/conversations/${s.conversationId}/messages`;
      const key = newKey();
      await expect(
        call('POST', path, { token: s.apiKey, idempotencyKey: key, body: textSend('committed') }),
      ).rejects.toThrow(TypeError);
      const history = ListMessagesResponse.parse((await call('GET', path, { token: s.apiKey })).body);
      expect(history.messages.map((m) => m.parts?.[0]?.text)).toEqual(['committed']);
      const retry = await call('POST', path, {
        token: s.apiKey,
        idempotencyKey: key,
        body: textSend('committed'),
      });
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
    });

    it('cut_stream: breaks the body after that many events; lines not yet applied are not applied', async () => {
      const s = await setupScenario(mock);
      mock.faults.inject({ path: '/v1/conversations/*/messages', fault: 'cut_stream', after_events: 2 });
      const { response, writer } = await streamingSend(baseUrl(), s.conversationId, s.apiKey, newKey(), {
        schema: 'svc.agent-send.v1',
        content: [],
        stream: true,
      });
      const events = new EventReader(response);
      const [started] = (await events.waitFor(1)) as [MessageStartedEvent];
      const blockId = started.message.content[0]?.id ?? '';
      writer.line({
        type: 'message.patch',
        patch: { op: 'appendText', blockId, path: '/text', value: 'one' },
      });
      expect(await events.done).toBeInstanceOf(Error);
      writer.line({
        type: 'message.patch',
        patch: { op: 'appendText', blockId, path: '/text', value: 'two' },
      });
      writer.close();
      expect(events.events).toHaveLength(2);
      const history = ListMessagesResponse.parse(
        (await call('GET', `/v1/conversations/${s.conversationId}/messages`, { token: s.apiKey })).body,
      );
      expect(history.messages[0]).toMatchObject({
        status: 'streaming',
        revision: 1,
        parts: [{ text: 'one' }],
      });
    });

    it('cut_stream: counts a matching request without a stream, where it cannot fire', async () => {
      const s = await setupScenario(mock);
      mock.faults.inject({ path: '/v1/conversations/*/messages', fault: 'cut_stream', after_events: 1 });
      const path = `/v1/conversations/${s.conversationId}/messages`;
      expect(
        (await call('POST', path, { token: s.apiKey, idempotencyKey: newKey(), body: textSend('plain') }))
          .status,
      ).toBe(201);
      const events = new EventReader(
        await jsonStreamingSend(baseUrl(), s.conversationId, s.apiKey, newKey(), {
          schema: 'svc.agent-send.v1',
          content: [],
        }),
      );
      await events.waitFor(1);
      events.cancel();
      expect(await events.done).not.toBeInstanceOf(Error);
    });

    it('refuse_streamed_body: answers 415 streaming_unsupported to an NDJSON request only', async () => {
      const s = await setupScenario(mock);
      mock.faults.inject({ path: '/v1/conversations/*/messages', fault: 'refuse_streamed_body', times: 2 });
      const plain = await jsonStreamingSend(baseUrl(), s.conversationId, s.apiKey, newKey(), {
        schema: 'svc.agent-send.v1',
        content: [],
      });
      expect(plain.status).toBe(200);
      await plain.body?.cancel();
      const { response, writer } = await streamingSend(baseUrl(), s.conversationId, s.apiKey, newKey(), {
        schema: 'svc.agent-send.v1',
        content: [],
        stream: true,
      });
      writer.close();
      expect(response.status).toBe(415);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        'streaming_unsupported',
      );
    });

    it('rejects a malformed fault with a message naming the field', () => {
      expect(() => mock.faults.inject({ path: 'no-slash', fault: 'status', status: 200 } as never)).toThrow(
        /path|status/,
      );
    });
  });
});
