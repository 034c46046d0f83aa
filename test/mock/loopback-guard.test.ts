// The loopback server is reachable from every web page the developer has open. /_mock and the page
// answer only requests addressed to a loopback name (no DNS rebinding), and /_mock writes only from
// the mock's own origin with JSON bodies (no cross-site simple POSTs). /v1 stays a service API.

import { request as httpRequest } from 'node:http';
import { createMockService } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
import { type Answer, errorOf } from './helpers.js';
import { useMockOverLoopback } from './stream-helpers.js';

const ctx = useMockOverLoopback();

/** One raw request: node:http, since fetch sets Host itself. */
function raw(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  const url = new URL(path, ctx.baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // Not JSON (the page): keep the text.
        }
        const answerHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (typeof value === 'string') answerHeaders.set(name, value);
        }
        resolve({ status: response.statusCode ?? 0, headers: answerHeaders, body: parsed });
      });
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const port = () => new URL(ctx.baseUrl).port;
const own = () => `http://127.0.0.1:${port()}`;
const json = { 'content-type': 'application/json' };
const userBody = JSON.stringify({ display_name: 'Mallory' });
const users = () => ctx.mock.snapshot().users.map((user) => user.display_name);

describe('the Host rule on the loopback server', () => {
  it('refuses /_mock and the page with 403 for a Host that is not a loopback name', async () => {
    const paths = ['/_mock/state', '/_mock/requests', '/', '/_mock/ui/app.js'];
    const hosts = [
      `rebind.evil.example:${port()}`,
      'localhost.evil.example',
      'evil.example@127.0.0.1',
      '127.0.0.2',
      'localhost:99999',
    ];
    for (const host of hosts) {
      for (const path of paths) {
        const answer = await raw('GET', path, { host });
        expect(answer.status, `${host} ${path}`).toBe(403);
        expect(errorOf(answer)).toMatchObject({
          code: 'forbidden',
          message: expect.stringMatching(/^host: /),
        });
        expect(answer.headers.get('request-id')).toMatch(/^req_/);
      }
    }
    ctx.mock.createUser({ display_name: 'Ada' });
    const reset = await raw('POST', '/_mock/reset', { host: hosts[0] ?? '' });
    expect(reset.status).toBe(403);
    expect(users()).toEqual(['Ada']);
  });

  it('answers /_mock and the page for 127.0.0.1, localhost and [::1], with any port or none', async () => {
    for (const host of [
      `127.0.0.1:${port()}`,
      '127.0.0.1',
      `localhost:${port()}`,
      'LocalHost:8080',
      `[::1]:${port()}`,
      '[::1]',
    ]) {
      expect((await raw('GET', '/_mock/state', { host })).status, host).toBe(200);
      expect((await raw('GET', '/', { host })).status, host).toBe(200);
    }
  });

  it('leaves /v1 and the file URLs alone: they answer any Host and Origin, as a real service does', async () => {
    const answer = await raw(
      'POST',
      '/v1/agents',
      { ...json, host: 'api.example.com', origin: 'https://evil.example' },
      JSON.stringify({
        handle: 'any_host',
        display_name: 'Any',
        webhook_url: 'https://bot.example/hook',
        capabilities: ['text'],
      }),
    );
    expect(answer.status).toBe(201);
    expect(ctx.mock.requests.map((entry) => entry.path)).toEqual(['/v1/agents']);
  });
});

describe('the cross-site rule for /_mock writes on the loopback server', () => {
  it("refuses a write whose Origin is not the mock's own, and changes nothing", async () => {
    for (const origin of ['https://evil.example', 'null', `http://127.0.0.1:${Number(port()) + 1}`]) {
      for (const type of ['text/plain', 'application/json']) {
        const answer = await raw('POST', '/_mock/users', { 'content-type': type, origin }, userBody);
        expect(answer.status, `${origin} ${type}`).toBe(403);
        expect(errorOf(answer)).toMatchObject({
          code: 'forbidden',
          message: expect.stringMatching(/^origin: /),
        });
      }
    }
    expect(users()).toEqual([]);
    ctx.mock.faults.inject({ path: '/v1/agents', fault: 'status', status: 503 });
    expect((await raw('DELETE', '/_mock/faults', { origin: 'https://evil.example' })).status).toBe(403);
    expect((await raw('POST', '/_mock/reset', { origin: 'https://evil.example' })).status).toBe(403);
    expect((await raw('POST', '/v1/agents', json, '{}')).status).toBe(503);
  });

  it('refuses a write whose body is not application/json, the kind a page may send without asking', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      const answer = await raw('POST', '/_mock/users', { 'content-type': type }, userBody);
      expect(answer.status, type).toBe(403);
      expect(errorOf(answer)).toMatchObject({
        code: 'forbidden',
        message: expect.stringMatching(/^content-type: /),
      });
    }
    expect((await raw('POST', '/_mock/users', {}, userBody)).status).toBe(403);
    expect(users()).toEqual([]);
  });

  it("accepts the page's own writes: its own origin (as the page was opened), JSON or no body", async () => {
    expect((await raw('POST', '/_mock/users', { ...json, origin: own() }, userBody)).status).toBe(201);
    const viaLocalhost = { host: `localhost:${port()}`, origin: `http://localhost:${port()}` };
    const charset = { 'content-type': 'application/json; charset=utf-8' };
    expect((await raw('POST', '/_mock/users', { ...charset, ...viaLocalhost }, userBody)).status).toBe(201);
    expect((await raw('POST', '/_mock/users', json, userBody)).status).toBe(201);
    expect(users()).toEqual(['Mallory', 'Mallory', 'Mallory']);
    expect((await raw('POST', '/_mock/reset', { origin: own() })).status).toBe(200);
    expect(users()).toEqual([]);
  });
});

describe('the in-process doors', () => {
  it('keep /_mock open on their own base URL, which is not a loopback name', async () => {
    const mock = createMockService();
    expect(new URL(mock.baseUrl).hostname).toBe('ams.test');
    const created = await mock.fetch('/_mock/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: userBody,
    });
    expect(created.status).toBe(201);
    expect((await mock.fetch('/_mock/state')).status).toBe(200);
    expect((await mock.fetch('/_mock/reset', { method: 'POST' })).status).toBe(200);
  });
});
