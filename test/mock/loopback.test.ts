import { connect } from 'node:net';
import { schemas } from 'agent-messaging';
import { createMockService } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
import { newKey, setupScenario, WebhookReceiver } from './helpers.js';
import { EventReader, jsonStreamingSend, useMockOverLoopback } from './stream-helpers.js';

// The wire schemas as values, from the public namespace.
const { Attachment } = schemas;

const ctx = useMockOverLoopback();

describe('the loopback server', () => {
  it('serves on 127.0.0.1 with a base URL without a trailing slash', () => {
    expect(ctx.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('builds upload and download URLs on its own origin', async () => {
    const s = await setupScenario(ctx.mock);
    const created = Attachment.parse(
      (
        await ctx.call('POST', '/v1/attachments', {
          token: s.apiKey,
          body: { name: 'a.bin', mime_type: 'application/octet-stream', size_bytes: 3 },
        })
      ).body,
    );
    expect(created.upload_url.startsWith(`${ctx.baseUrl}/_files/`)).toBe(true);
    const put = await fetch(created.upload_url, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array([1, 2, 3]),
    });
    expect(put.status).toBe(200);
    const bytes = new Uint8Array(await (await fetch(created.download_url)).arrayBuffer());
    expect([...bytes]).toEqual([1, 2, 3]);
  });

  it('close() ends open streams and stops listening', async () => {
    const receiver = new WebhookReceiver();
    const mock = createMockService({ fetch: receiver.fetch });
    const server = await mock.listen({ port: 0 });
    const s = await setupScenario(mock);
    const events = new EventReader(
      await jsonStreamingSend(server.baseUrl, s.conversationId, s.apiKey, newKey(), {
        schema: 'svc.agent-send.v1',
        content: [],
      }),
    );
    await events.waitFor(1);
    expect(mock.openStreams).toBe(1);
    await server.close();
    // The stream is over (cut: the client's read fails), the mock holds it no more, and nothing listens.
    const ended = await events.done;
    expect(ended).toBeInstanceOf(Error);
    expect(mock.openStreams).toBe(0);
    expect(mock.snapshot().conversations.flatMap((c) => c.messages.map((m) => m.status))).toEqual([
      'streaming',
    ]);
    await expect(fetch(`${server.baseUrl}/v1/agents`)).rejects.toThrow();
  });

  it('logs a send exactly as mock.fetch logs the same request, and replays it across the two doors', async () => {
    const s = await setupScenario(ctx.mock);
    const key = newKey();
    const body = JSON.stringify({ schema: 'svc.agent-send.v1', content: [{ type: 'text', text: 'héllo' }] });
    const path = `/v1/conversations/${s.conversationId}/messages?note=a%20b&note=c`;
    // As a client may write them: mixed case, a repeated name, spaces and a tab around a value.
    const headers: [string, string][] = [
      ['Host', new URL(ctx.baseUrl).host],
      ['Authorization', `Bearer ${s.apiKey}`],
      ['Content-Type', 'application/json'],
      ['Idempotency-Key', key],
      ['X-Trace', ' \tfirst  '],
      ['x-trace', 'second'],
      ['Content-Length', String(Buffer.byteLength(body))],
      ['Connection', 'close'],
    ];
    const overDoor = await rawRequest(ctx.baseUrl, 'POST', path, headers, body);
    expect(overDoor.status).toBe(201);
    const viaFetch = await ctx.mock.fetch(
      new Request(`${ctx.baseUrl}${path}`, { method: 'POST', headers: new Headers(headers), body }),
    );
    expect(viaFetch.status).toBe(201);
    expect(viaFetch.headers.get('idempotent-replayed')).toBe('true');
    expect(await viaFetch.json()).toEqual(JSON.parse(overDoor.body));

    const [door, fetched] = ctx.mock.requests.slice(-2);
    expect(door).toEqual(fetched);
    expect(Object.keys(door!.headers)).toEqual(Object.keys(fetched!.headers));
    expect(door).toMatchObject({
      method: 'POST',
      query: { note: 'c' },
      body,
      headers: { authorization: 'Bearer ***', 'x-trace': 'first, second' },
    });
  });

  it('reads a path as Fetch does: a dot segment cannot take /v1 past the guard of /_mock', async () => {
    for (const path of ['/v1/../_mock/state', '/v1/%2e%2e/_mock/state']) {
      const headers: [string, string][] = [
        ['Host', 'evil.example'],
        ['Connection', 'close'],
      ];
      const answer = await rawRequest(ctx.baseUrl, 'GET', path, headers, '');
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'forbidden' } });
    }
  });
});

/**
 * One request written byte for byte on its own connection (fetch would rewrite the path and the
 * headers); `headers` should end with `Connection: close`, since the answer is read to the end.
 */
function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: [string, string][],
  body: string,
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(baseUrl);
  const head = [`${method} ${path} HTTP/1.1`, ...headers.map(([name, value]) => `${name}:${value}`)];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [top = '', rest = ''] = text.split('\r\n\r\n', 2);
      resolve({ status: Number(top.split(' ')[1]), body: rest });
    });
  });
}
