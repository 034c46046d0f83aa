// Requests that cannot become a Fetch Request (a bad Host, TRACE) are answered 4xx by both users of
// the node:http bridge, never 500 (a 500 makes the service retry a delivery that can never succeed).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBot } from 'agent-messaging';
import { toNodeHandler } from 'agent-messaging/node';
import { createMockService, generateWebhookSecret } from 'agent-messaging/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rawRequest } from './raw-http.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function serveBot() {
  const bot = createBot({
    apiKey: 'ams_sk_test',
    webhookSecret: generateWebhookSecret(),
    baseUrl: 'http://ams.test',
  });
  const seen = vi.fn();
  bot.onAny(seen);
  const next = vi.fn();
  const handler = toNodeHandler(bot);
  const server = createServer((req, res) => void handler(req, res, next));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, seen, next };
}

const errorCode = (body: string) => (JSON.parse(body) as { error: { code: string } }).error.code;

describe('toNodeHandler with a request Fetch cannot represent', () => {
  it('answers 400 to a Host that is not a host name, without calling the bot or next()', async () => {
    const { port, seen, next } = await serveBot();
    for (const host of ['exa mple.com', 'evil.com/path?', '[::1', 'bot.example:99999']) {
      const answer = await rawRequest(port, ['POST /webhook HTTP/1.1', `Host: ${host}`], '{}');
      expect(answer.status, host).toBe(400);
      expect(errorCode(answer.body)).toBe('bad_request');
    }
    expect(seen).not.toHaveBeenCalled();
    expect(next).not.toHaveBeenCalled();
  });

  it('answers 405 to TRACE, a method Fetch refuses', async () => {
    const { port, next } = await serveBot();
    const answer = await rawRequest(port, ['TRACE /webhook HTTP/1.1', 'Host: 127.0.0.1']);
    expect(answer.status).toBe(405);
    expect(errorCode(answer.body)).toBe('method_not_allowed');
    expect(next).not.toHaveBeenCalled();
  });

  it('still answers a well-formed request with what bot.fetch answers (a GET is 405 from the bot)', async () => {
    const { port } = await serveBot();
    const answer = await rawRequest(port, ['GET /webhook HTTP/1.1', 'Host: 127.0.0.1']);
    expect(answer.status).toBe(405);
  });
});

describe('the mock loopback door with a request Fetch cannot represent', () => {
  it('answers TRACE with 405 and keeps serving', async () => {
    const mock = createMockService();
    const server = await mock.listen({ port: 0 });
    closers.push(server.close);
    const port = Number(new URL(server.baseUrl).port);
    const answer = await rawRequest(port, ['TRACE /v1/agents HTTP/1.1', 'Host: 127.0.0.1']);
    expect(answer.status).toBe(405);
    expect(errorCode(answer.body)).toBe('method_not_allowed');
    const after = await fetch(`${server.baseUrl}/v1/conversations/cnv_1/messages`);
    expect(after.status).toBe(401);
  });
});
