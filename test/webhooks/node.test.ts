import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBot } from 'agent-messaging';
import { toNodeHandler } from 'agent-messaging/node';
import { generateWebhookSecret, signWebhook } from 'agent-messaging/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';

const secret = generateWebhookSecret();
const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

type Middleware = (
  req: IncomingMessage & { body?: unknown; _body?: boolean },
  res: ServerResponse,
) => Promise<void>;

/** A node:http server running `before` (a body parser, as Express would) and then the bot's handler. */
async function serve(before: Middleware | undefined, options?: Parameters<typeof toNodeHandler>[1]) {
  const bot = createBot({ apiKey: 'ams_sk_test', webhookSecret: secret, baseUrl: 'http://ams.test' });
  const seen = vi.fn();
  bot.onAny((ctx) => seen(ctx.event));
  const handler = toNodeHandler(bot, options);
  const server = createServer(async (req, res) => {
    await before?.(req, res);
    await handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`, seen };
}

async function deliver(url: string, eventId = 'evt_node') {
  const body = JSON.stringify({
    schema: 'svc.event.v1',
    eventId,
    type: 'agent.renamed',
    createdAt: new Date().toISOString(),
    agentId: 'agt_1',
  });
  const headers = await signWebhook({ id: eventId, payload: body, secret });
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { response, answer: (await response.json()) as { error?: { code: string; message: string } } };
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('toNodeHandler', () => {
  it('reads the raw body of a node:http request and answers what bot.fetch answers', async () => {
    const { url, seen } = await serve(undefined);
    const { response } = await deliver(url);
    expect(response.status).toBe(200);
    expect(seen).toHaveBeenCalledWith(expect.objectContaining({ eventId: 'evt_node' }));
  });

  it('uses the Buffer that express.raw() left in req.body', async () => {
    const { url, seen } = await serve(async (req) => {
      req.body = await readAll(req);
      req._body = true;
    });
    expect((await deliver(url)).response.status).toBe(200);
    expect(seen).toHaveBeenCalledTimes(1);
  });

  it('answers 400 telling to mount express.raw when express.json() already parsed the body', async () => {
    const { url, seen } = await serve(async (req) => {
      req.body = JSON.parse((await readAll(req)).toString('utf8'));
      req._body = true;
    });
    const { response, answer } = await deliver(url);
    expect(response.status).toBe(400);
    expect(answer.error?.code).toBe('body_already_parsed');
    expect(answer.error?.message).toContain("express.raw({ type: 'application/json' })");
    expect(seen).not.toHaveBeenCalled();
  });

  it('still reads the stream when a body parser only left an empty object behind', async () => {
    // Express 4's body parsers set req.body = {} for a request they skip, without consuming it.
    const { url } = await serve(async (req) => {
      req.body = {};
    });
    expect((await deliver(url)).response.status).toBe(200);
  });

  it('answers 413 to a body over maxBodyBytes, before verifying anything', async () => {
    const { url, seen } = await serve(undefined, { maxBodyBytes: 64 });
    const { response, answer } = await deliver(url);
    expect(response.status).toBe(413);
    expect(answer.error?.code).toBe('payload_too_large');
    expect(seen).not.toHaveBeenCalled();
  });

  it('answers 401 to a forged delivery, never 500', async () => {
    const { url, seen } = await serve(undefined);
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'webhook-id': 'evt_x',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,Zm9yZ2Vk',
      },
      body: '{}',
    });
    expect(response.status).toBe(401);
    expect(seen).not.toHaveBeenCalled();
  });
});
