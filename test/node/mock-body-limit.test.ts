// The mock reads at most 1 MiB and one byte of a body before it authenticates and checks its size
// (PROTOCOL.md section 2: 413 payload_too_large, on /v1 and on /_mock alike), and its request log
// keeps a bounded start of a large body, with a mark. The bodies below never end: a mock that read
// them whole would never answer.
import { request as httpRequest } from 'node:http';
import { registerAgent } from 'agent-messaging';
import { createMockService, type MockServer, type MockService } from 'agent-messaging/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const MiB = 1024 * 1024;
let mock: MockService;
let server: MockServer;
beforeEach(async () => {
  mock = createMockService();
  server = await mock.listen({ port: 0 });
});
afterEach(() => server.close());

/** Sends `bytes` of a chunked body and never ends it; answers the status and error code. */
function unendingPost(path: string, headers: Record<string, string>, bytes: number) {
  return new Promise<{ status: number; code: string }>((resolve, reject) => {
    const req = httpRequest(`${server.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => {
        req.destroy();
        resolve({
          status: res.statusCode ?? 0,
          code: (JSON.parse(text) as { error: { code: string } }).error.code,
        });
      });
    });
    // A JSON string that keeps going: `{"text":"aaaa...` (valid so far, never closed).
    req.write('{"text":"');
    for (let sent = 0; sent < bytes; sent += 64 * 1024) req.write('a'.repeat(64 * 1024));
  });
}

async function agentKey(): Promise<string> {
  const { api_key } = await registerAgent(
    { handle: 'limit_bot', display_name: 'Limit', webhook_url: 'http://hook.test/', capabilities: ['text'] },
    { baseUrl: server.baseUrl },
  );
  return api_key;
}

describe('a body over 1 MiB on the loopback mock', () => {
  it('is answered 401 without a token and 413 with one, before the body ends', async () => {
    const path = '/v1/conversations/cnv_none/messages';
    expect(await unendingPost(path, {}, 2 * MiB)).toEqual({ status: 401, code: 'unauthorized' });
    const key = await agentKey();
    const answer = await unendingPost(
      path,
      { authorization: `Bearer ${key}`, 'idempotency-key': 'k-1' },
      2 * MiB,
    );
    expect(answer).toEqual({ status: 413, code: 'payload_too_large' });
  });

  it('keeps a bounded start of the body in the request log, with a mark', async () => {
    const key = await agentKey();
    await unendingPost('/v1/conversations/cnv_none/messages', { authorization: `Bearer ${key}` }, 2 * MiB);
    const logged = mock.requests.find((entry) => entry.path === '/v1/conversations/cnv_none/messages');
    expect(logged?.body?.startsWith('{"text":"aaaa')).toBe(true);
    expect(logged?.body?.length).toBeLessThan(70 * 1024);
    expect(logged?.body).toMatch(
      /… \[request log: the first 65536 characters of a more than 1048576-byte body\]$/,
    );
  });

  it('is answered 413 on /_mock too', async () => {
    const answer = await unendingPost('/_mock/users', {}, 2 * MiB);
    expect(answer).toEqual({ status: 413, code: 'payload_too_large' });
  });

  it('keeps a body of exactly 1 MiB whole: it is parsed, not refused for its size', async () => {
    const key = await agentKey();
    const text = 'b'.repeat(MiB - '{"text":""}'.length);
    const answer = await fetch(`${server.baseUrl}/v1/conversations/cnv_none/messages`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'idempotency-key': 'k-2',
      },
      body: JSON.stringify({ text }),
    });
    // Refused for its shape (no schema or content), not for its size.
    expect(answer.status).toBe(400);
    const logged = mock.requests.at(-1)?.body ?? '';
    expect(logged.length).toBeLessThan(70 * 1024);
    expect(logged).toContain('of a 1048576-byte body]');
  });
});

describe('a body over 1 MiB through mock.fetch (in process)', () => {
  it('is answered 413 after authentication, from a stream read no further than the limit', async () => {
    const key = await agentKey();
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x61));
      },
    });
    const response = await mock.fetch(
      new Request('http://ams.test/v1/conversations/cnv_none/messages', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit),
    );
    expect(response.status).toBe(413);
    expect(pulled).toBeLessThan(MiB + 4 * 64 * 1024);
  });
});
