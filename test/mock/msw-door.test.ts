import { type MessageStartedEvent, schemas } from 'agent-messaging';
import { createMockService } from 'agent-messaging/testing';
import { mswHandlers } from 'agent-messaging/testing/msw';
import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { newKey, setupScenario } from './helpers.js';
import { useMockOverMsw } from './msw-setup.js';
import { EventReader, streamingSend } from './stream-helpers.js';

// The wire schemas as values, from the public namespace.
const { ListMessagesResponse } = schemas;

const { mock, call, server } = useMockOverMsw();

describe('the msw door', () => {
  it('streams an NDJSON body line by line through msw while the events come back', async () => {
    const s = await setupScenario(mock);
    const { response, writer } = await streamingSend(mock.baseUrl, s.conversationId, s.apiKey, newKey(), {
      schema: 'svc.agent-send.v1',
      content: [],
      stream: true,
    });
    const events = new EventReader(response);
    const [started] = (await events.waitFor(1)) as [MessageStartedEvent];
    const blockId = started.message.content[0]?.id ?? '';
    writer.line({
      type: 'message.patch',
      patch: { op: 'appendText', blockId, path: '/text', value: 'via msw' },
    });
    await events.waitFor(2);
    writer.line({ type: 'message.completed' });
    writer.close();
    expect(await events.done).toBe('end');
    const history = ListMessagesResponse.parse(
      (await call('GET', `/v1/conversations/${s.conversationId}/messages`, { token: s.apiKey })).body,
    );
    expect(history.messages[0]).toMatchObject({ status: 'sent', parts: [{ text: 'via msw' }], revision: 1 });
  });

  it('delivers webhooks through the global fetch by default, so msw handlers can receive them', async () => {
    const hooks: string[] = [];
    const viaGlobal = createMockService({ baseUrl: 'http://second.test' });
    server.use(
      ...mswHandlers(viaGlobal),
      http.post('https://hooks.example/in', async ({ request }) => {
        hooks.push(((await request.json()) as { type: string }).type);
        return new HttpResponse(null, { status: 204 });
      }),
    );
    const registered = await fetch('http://second.test/v1/agents', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        handle: 'global',
        display_name: 'G',
        webhook_url: 'https://hooks.example/in',
        capabilities: ['text'],
      }),
    });
    const { agent, api_key } = (await registered.json()) as { agent: { id: string }; api_key: string };
    const patched = await fetch(`http://second.test/v1/agents/${agent.id}/webhook`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${api_key}` },
      body: JSON.stringify({ webhook_url: 'https://hooks.example/in' }),
    });
    expect(patched.status).toBe(200);
    expect(hooks).toEqual(['webhook.test']);
    server.resetHandlers();
  });

  it('answers in-process through mock.fetch, with relative URLs resolved against baseUrl', async () => {
    const answer = await mock.fetch('/v1/agents', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        handle: 'inproc',
        display_name: 'I',
        webhook_url: 'https://x.example/',
        capabilities: ['text'],
      }),
    });
    expect(answer.status).toBe(201);
    expect(mock.requests.at(-1)?.path).toBe('/v1/agents');
  });

  it('stops a stream in-process when the request is aborted, leaving the message streaming', async () => {
    const s = await setupScenario(mock);
    const abort = new AbortController();
    const response = await mock.fetch(
      new Request(`${mock.baseUrl}/v1/conversations/${s.conversationId}/messages?stream=true`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${s.apiKey}`,
          'idempotency-key': newKey(),
          'content-type': 'application/json',
        },
        body: JSON.stringify({ schema: 'svc.agent-send.v1', content: [{ type: 'text', text: 'begun' }] }),
        signal: abort.signal,
      }),
    );
    const events = new EventReader(response);
    await events.waitFor(1);
    abort.abort();
    expect(await events.done).toBeInstanceOf(Error);
    const history = ListMessagesResponse.parse(
      (await call('GET', `/v1/conversations/${s.conversationId}/messages`, { token: s.apiKey })).body,
    );
    expect(history.messages[0]).toMatchObject({
      status: 'streaming',
      parts: [{ text: 'begun' }],
      revision: 0,
    });
  });
});
