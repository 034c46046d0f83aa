// toNodeHandler hands bot.handleDelivery the bytes and headers it read (no Request, no Response), as
// bot.fetch does from a Request: both must answer exactly the same and make the same calls to the service. Two bots
// of the same agent (each with its own store) get the same recorded deliveries, one through bot.fetch,
// one through toNodeHandler over real HTTP, and their answers and the mock's request log are compared.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Bot, createBot } from 'agent-messaging';
import { toNodeFetchHandler, toNodeHandler } from 'agent-messaging/node';
import { signWebhook } from 'agent-messaging/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createLoop, type Loop, type RecordedDelivery, recordMessage } from './harness.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const MIB = 1024 * 1024;

/** An answer, as compared between the two doors. */
interface Answer {
  status: number;
  type: string | null;
  allow: string | null;
  retryAfter: string | null;
  body: unknown;
}

async function answerOf(response: Response): Promise<Answer> {
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    allow: response.headers.get('allow'),
    retryAfter: response.headers.get('retry-after'),
    body: await response.json(),
  };
}

/** Serves `bot` with toNodeHandler on loopback; answers its URL. */
async function serve(bot: Bot, options?: Parameters<typeof toNodeHandler>[1]): Promise<string> {
  const handler = toNodeHandler(bot, options);
  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
}

/** The loop's bot on bot.fetch, and a second bot of the same agent behind toNodeHandler. */
async function twoDoors(options: { maxBodyBytes?: number } = {}) {
  const loop = await createLoop();
  const other = createBot({ apiKey: loop.apiKey, webhookSecret: loop.secret, ...loop.connection });
  const ran = { fetch: [] as string[], node: [] as string[] };
  const echo = (door: keyof typeof ran) => async (ctx: Parameters<Parameters<Bot['on']>[1]>[0]) => {
    ran[door].push(ctx.webhookId);
    if ('text' in ctx) await ctx.reply(`Echo: ${ctx.text}`);
  };
  loop.bot.on('message.received', echo('fetch'));
  other.on('message.received', echo('node'));
  const url = await serve(other, options);
  return { loop, ran, url };
}

/** Sends the same delivery to both doors; answers both answers and the mock requests each caused. */
async function bothDoors(loop: Loop, url: string, delivery: RecordedDelivery, method = 'POST') {
  const init = () => ({
    method,
    headers: delivery.headers,
    ...(method === 'POST' ? { body: delivery.body } : {}),
  });
  const before = loop.mock.requests.length;
  const viaFetch = await answerOf(await loop.bot.fetch(new Request('http://bot.test/webhook', init())));
  const middle = loop.mock.requests.length;
  const viaNode = await answerOf(await fetch(url, init()));
  const after = loop.mock.requests.length;
  const calls = (from: number, to: number) =>
    loop.mock.requests.slice(from, to).map(({ method, path, headers, body }) => ({
      method,
      path,
      key: headers['idempotency-key'],
      body,
    }));
  return { viaFetch, viaNode, sent: { fetch: calls(before, middle), node: calls(middle, after) } };
}

describe('toNodeHandler and bot.fetch answer a delivery the same', () => {
  it('a valid delivery, then its redelivery: the same answers and the same calls to the service', async () => {
    const { loop, ran, url } = await twoDoors();
    const delivery = await recordMessage(loop, 'hello there');

    const first = await bothDoors(loop, url, delivery);
    expect(first.viaFetch).toEqual({
      status: 200,
      type: 'application/json',
      allow: null,
      retryAfter: null,
      body: { received: true },
    });
    expect(first.viaNode).toEqual(first.viaFetch);
    // The conversation's kind (asked once per bot), then the reply.
    expect(first.sent.fetch.map((call) => call.method)).toEqual(['GET', 'POST']);
    expect(first.sent.fetch[1]).toMatchObject({ path: expect.stringMatching(/\/messages$/) });
    expect(first.sent.fetch[1]?.body).toContain('Echo: hello there');
    expect(first.sent.node).toEqual(first.sent.fetch);

    const again = await bothDoors(loop, url, delivery);
    expect(again.viaFetch.body).toEqual({ received: true, duplicate: true });
    expect(again.viaNode).toEqual(again.viaFetch);
    expect(again.sent).toEqual({ fetch: [], node: [] });
    const id = delivery.headers.get('webhook-id');
    expect(ran).toEqual({ fetch: [id], node: [id] });
  });

  it('a forged signature, missing headers and a GET: the same refusals, nothing run or sent', async () => {
    const { loop, ran, url } = await twoDoors();
    const delivery = await recordMessage(loop, 'hello');
    const forged = { body: delivery.body.replace('hello', 'HELLO'), headers: delivery.headers };
    const unsigned = { body: delivery.body, headers: new Headers({ 'content-type': 'application/json' }) };

    const bad = await bothDoors(loop, url, forged);
    expect(bad.viaFetch).toMatchObject({ status: 401, body: { error: { code: 'no_matching_signature' } } });
    expect(bad.viaNode).toEqual(bad.viaFetch);

    const missing = await bothDoors(loop, url, unsigned);
    expect(missing.viaFetch).toMatchObject({ status: 400, body: { error: { code: 'missing_headers' } } });
    expect(missing.viaNode).toEqual(missing.viaFetch);

    const get = await bothDoors(loop, url, delivery, 'GET');
    expect(get.viaFetch).toMatchObject({ status: 405, allow: 'POST' });
    expect(get.viaNode).toEqual(get.viaFetch);

    for (const outcome of [bad, missing, get]) expect(outcome.sent).toEqual({ fetch: [], node: [] });
    expect(ran).toEqual({ fetch: [], node: [] });
  });

  it('a signed body over 1 MiB: 413 from both, also when toNodeHandler would read more', async () => {
    // maxBodyBytes over the bot's own limit: the node door reads it all, and the delivery refuses it.
    const { loop, ran, url } = await twoDoors({ maxBodyBytes: 2 * MIB });
    const body = JSON.stringify({
      schema: 'svc.event.v1',
      eventId: 'evt_big',
      type: 'agent.padded',
      createdAt: new Date().toISOString(),
      agentId: loop.agent.id,
      pad: 'x'.repeat(MIB),
    });
    const headers = new Headers({
      'content-type': 'application/json',
      ...(await signWebhook({ id: 'evt_big', payload: body, secret: loop.secret })),
    });
    const big = await bothDoors(loop, url, { body, headers });
    expect(big.viaFetch).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large' } } });
    expect(big.viaNode).toEqual(big.viaFetch);
    expect(ran).toEqual({ fetch: [], node: [] });
  });
});

describe('toNodeHandler and toNodeFetchHandler', () => {
  it('serves a wrapper of bot.fetch through toNodeFetchHandler (the wrapper keeps its say)', async () => {
    const loop = await createLoop();
    const seen: string[] = [];
    const wrapper = {
      fetch: async (request: Request) => {
        seen.push(request.headers.get('webhook-id') ?? '');
        const response = await loop.bot.fetch(request);
        return new Response(response.body, { status: response.status, headers: { 'x-wrapped': 'yes' } });
      },
    };
    const handler = toNodeFetchHandler(wrapper);
    const server = createServer((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
    const delivery = await recordMessage(loop);
    const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-wrapped')).toBe('yes');
    expect(seen).toEqual([delivery.headers.get('webhook-id')]);
  });

  it("hands the handler's work to the waitUntil option when it answers 202 at once", async () => {
    const loop = await createLoop();
    const handed: Promise<unknown>[] = [];
    const bot = createBot({
      apiKey: loop.apiKey,
      webhookSecret: loop.secret,
      ...loop.connection,
      ack: 'immediately',
      waitUntil: (promise) => handed.push(promise),
    });
    let finished = false;
    bot.on('message.received', async (ctx) => {
      await ctx.reply('later');
      finished = true;
    });
    const url = await serve(bot);
    const delivery = await recordMessage(loop);
    const before = loop.mock.requests.length;
    const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ received: true });
    expect(handed).toHaveLength(1);
    await handed[0];
    expect(finished).toBe(true);
    const sends = loop.mock.requests.slice(before).filter((entry) => entry.method === 'POST');
    expect(sends.map((entry) => entry.body)).toEqual([expect.stringContaining('later')]);
  });

  it('reads a joined webhook-signature (two signatures, as a repeated header arrives) like bot.fetch', async () => {
    const { loop, url } = await twoDoors();
    const delivery = await recordMessage(loop);
    const headers = new Headers(delivery.headers);
    headers.set('webhook-signature', `v1,bm90IGl0, ${delivery.headers.get('webhook-signature')}`);
    const outcome = await bothDoors(loop, url, { body: delivery.body, headers });
    expect(outcome.viaFetch.status).toBe(200);
    expect(outcome.viaNode).toEqual(outcome.viaFetch);
  });
});
