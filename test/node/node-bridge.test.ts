// Requests that cannot become a Fetch Request (a bad Host, TRACE) are answered 4xx by the users of
// the node:http bridge, never 500 (a 500 makes the service retry a delivery that can never succeed);
// toNodeHandler never makes a Request, so a bad Host is nothing to it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBot } from 'agent-messaging';
import { type NodeHandler, toNodeFetchHandler, toNodeHandler } from 'agent-messaging/node';
import { createMockService, generateWebhookSecret, signWebhook } from 'agent-messaging/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rawRequest } from './raw-http.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A bot served on loopback by `serve` (toNodeHandler, or toNodeFetchHandler around bot.fetch). */
async function serveBot(serve: (bot: ReturnType<typeof createBot>) => NodeHandler = toNodeHandler) {
  const webhookSecret = generateWebhookSecret();
  const bot = createBot({ apiKey: 'ams_sk_test', webhookSecret, baseUrl: 'http://ams.test' });
  const seen = vi.fn();
  bot.onAny(seen);
  const next = vi.fn();
  const handler = serve(bot);
  const server = createServer((req, res) => void handler(req, res, next));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, seen, next, webhookSecret };
}

/** An event type the SDK does not know, signed with `secret`, as raw header lines and a body. */
async function signedLines(secret: string, eventId: string) {
  const body = JSON.stringify({
    schema: 'svc.event.v1',
    eventId,
    type: 'agent.custom',
    createdAt: new Date().toISOString(),
    agentId: 'agt_1',
  });
  const headers = await signWebhook({ id: eventId, payload: body, secret });
  return { body, lines: Object.entries(headers).map(([name, value]) => `${name}: ${value}`) };
}

const errorCode = (body: string) => (JSON.parse(body) as { error: { code: string } }).error.code;

const BAD_HOSTS = ['exa mple.com', 'evil.com/path?', '[::1', 'bot.example:99999'];

describe('toNodeFetchHandler with a request Fetch cannot represent', () => {
  it('answers 400 to a Host that is not a host name, without calling the handler or next()', async () => {
    const { port, seen, next, webhookSecret } = await serveBot((bot) => toNodeFetchHandler(bot));
    for (const host of BAD_HOSTS) {
      const { body, lines } = await signedLines(webhookSecret, `evt_host_${BAD_HOSTS.indexOf(host)}`);
      const answer = await rawRequest(port, ['POST /webhook HTTP/1.1', `Host: ${host}`, ...lines], body);
      expect(answer.status, host).toBe(400);
      expect(errorCode(answer.body)).toBe('bad_request');
    }
    expect(seen).not.toHaveBeenCalled();
    expect(next).not.toHaveBeenCalled();
  });

  it('answers 405 to TRACE, a method Fetch refuses', async () => {
    const { port, next } = await serveBot((bot) => toNodeFetchHandler(bot));
    const answer = await rawRequest(port, ['TRACE /webhook HTTP/1.1', 'Host: 127.0.0.1']);
    expect(answer.status).toBe(405);
    expect(errorCode(answer.body)).toBe('method_not_allowed');
    expect(next).not.toHaveBeenCalled();
  });
});

describe('toNodeHandler never makes a Fetch Request', () => {
  it('verifies and runs a signed delivery whatever its Host says', async () => {
    const { port, seen, next, webhookSecret } = await serveBot();
    for (const host of BAD_HOSTS) {
      const { body, lines } = await signedLines(webhookSecret, `evt_host_${BAD_HOSTS.indexOf(host)}`);
      const answer = await rawRequest(port, ['POST /webhook HTTP/1.1', `Host: ${host}`, ...lines], body);
      expect(answer.status, host).toBe(200);
    }
    expect(seen).toHaveBeenCalledTimes(BAD_HOSTS.length);
    expect(next).not.toHaveBeenCalled();
  });

  it('answers 405 to TRACE', async () => {
    const { port, next } = await serveBot();
    const answer = await rawRequest(port, ['TRACE /webhook HTTP/1.1', 'Host: 127.0.0.1']);
    expect(answer.status).toBe(405);
    expect(errorCode(answer.body)).toBe('method_not_allowed');
    expect(next).not.toHaveBeenCalled();
  });

  it('answers 405 to a GET, as bot.fetch does', async () => {
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
