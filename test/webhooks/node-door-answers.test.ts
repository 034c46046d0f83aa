// The answers of toNodeHandler's direct door that carry more than a status: 409 for a webhook-id still
// being handled (past ackTimeoutMs, or its redelivery) carries `retry-after` (the service waits that
// long before its next attempt), and a failed handler is 500 so the service retries. The node door writes these answers itself (no
// Response), so each is compared with bot.fetch's over real HTTP, with the calls the bots made.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Bot, createBot } from 'agent-messaging';
import { toNodeHandler } from 'agent-messaging/node';
import { afterEach, describe, expect, it } from 'vitest';
import { createLoop, gate, type RecordedDelivery, recordMessage } from './harness.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function serve(bot: Bot): Promise<string> {
  const handler = toNodeHandler(bot);
  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
}

async function answerOf(response: Response) {
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    retryAfter: response.headers.get('retry-after'),
    body: (await response.json()) as unknown,
  };
}

const init = (delivery: RecordedDelivery) => ({
  method: 'POST',
  headers: delivery.headers,
  body: delivery.body,
});

describe('toNodeHandler writes the answers with headers as bot.fetch does', () => {
  it('409 with retry-after to a delivery still handled past ackTimeoutMs and to its redelivery, then 200 duplicate; one reply each', async () => {
    const loop = await createLoop({ ackTimeoutMs: 50 });
    const other = createBot({
      apiKey: loop.apiKey,
      webhookSecret: loop.secret,
      ...loop.connection,
      ackTimeoutMs: 50,
    });
    const held = { fetch: gate(), node: gate() };
    const started = { fetch: gate(), node: gate() };
    const handler = (door: 'fetch' | 'node') => async (ctx: Parameters<Parameters<Bot['on']>[1]>[0]) => {
      started[door].open();
      await held[door].opened;
      // The same text from both bots: one agent, so the same reply key (the second is a replay).
      if ('text' in ctx) await ctx.reply(`Echo: ${ctx.text}`);
    };
    loop.bot.on('message.received', handler('fetch'));
    other.on('message.received', handler('node'));
    const url = await serve(other);
    const delivery = await recordMessage(loop, 'hello');
    const before = loop.mock.requests.length;

    const firstFetch = loop.bot.fetch(new Request('http://bot.test/webhook', init(delivery)));
    await started.fetch.opened;
    const againFetch = await answerOf(
      await loop.bot.fetch(new Request('http://bot.test/webhook', init(delivery))),
    );

    const firstNode = fetch(url, init(delivery));
    await started.node.opened;
    const againNode = await answerOf(await fetch(url, init(delivery)));

    expect(againFetch).toEqual({
      status: 409,
      type: 'application/json',
      retryAfter: '5',
      body: { error: { code: 'delivery_in_progress', message: expect.any(String) } },
    });
    expect(againNode).toEqual(againFetch);
    // The first attempts too: their handlers outlived ackTimeoutMs, so no 2xx yet.
    expect(await answerOf(await firstFetch)).toEqual(againFetch);
    expect(await answerOf(await firstNode)).toEqual(againFetch);

    // One after the other: both bots are one agent, so their replies share a key.
    held.fetch.open();
    await loop.bot.idle();
    held.node.open();
    await other.idle();
    const doneFetch = await answerOf(
      await loop.bot.fetch(new Request('http://bot.test/webhook', init(delivery))),
    );
    const doneNode = await answerOf(await fetch(url, init(delivery)));
    expect(doneFetch).toEqual({
      status: 200,
      type: 'application/json',
      retryAfter: null,
      body: { received: true, duplicate: true },
    });
    expect(doneNode).toEqual(doneFetch);

    // One reply per bot (the second replayed under the same key): the refused redeliveries ran nothing.
    const replies = loop.mock.requests
      .slice(before)
      .filter((entry) => entry.method === 'POST' && entry.path.endsWith('/messages'))
      .map((entry) => (JSON.parse(entry.body ?? '{}') as { fallbackText?: string }).fallbackText);
    expect(replies).toEqual(['Echo: hello', 'Echo: hello']);
  });

  it('500 handler_failed when the handler throws, and the redelivery runs it again', async () => {
    const loop = await createLoop();
    const other = createBot({ apiKey: loop.apiKey, webhookSecret: loop.secret, ...loop.connection });
    const runs = { fetch: 0, node: 0 };
    const failing = (door: 'fetch' | 'node') => () => {
      runs[door] += 1;
      if (runs[door] === 1) throw new Error('the model is down');
    };
    loop.bot.on('message.received', failing('fetch'));
    other.on('message.received', failing('node'));
    for (const bot of [loop.bot, other]) bot.onError(() => undefined);
    const url = await serve(other);
    const delivery = await recordMessage(loop, 'hello');

    const viaFetch = await answerOf(
      await loop.bot.fetch(new Request('http://bot.test/webhook', init(delivery))),
    );
    const viaNode = await answerOf(await fetch(url, init(delivery)));
    expect(viaFetch).toEqual({
      status: 500,
      type: 'application/json',
      retryAfter: null,
      body: { error: { code: 'handler_failed', message: expect.any(String) } },
    });
    expect(viaNode).toEqual(viaFetch);
    // Nothing of the error (its message) goes over the wire to the service.
    expect(JSON.stringify(viaNode)).not.toContain('the model is down');

    const retryFetch = await loop.bot.fetch(new Request('http://bot.test/webhook', init(delivery)));
    const retryNode = await fetch(url, init(delivery));
    expect([retryFetch.status, retryNode.status]).toEqual([200, 200]);
    expect(runs).toEqual({ fetch: 2, node: 2 });
  });
});
