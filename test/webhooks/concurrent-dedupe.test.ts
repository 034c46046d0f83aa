// 'concurrent' on the memory store claims each delivery, runs it and marks it done, without the lock.
// The dedupe keeps its rules there: a redelivery of a handled message is a 200 duplicate, one of a
// message still running is not a 2xx, a failed run frees its claim so the retry runs the handler
// again, and a handled id stays done for the service's whole retry window.
import { type BotStore, createBot, createMemoryStore, type MessageContext } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { messageReceivedBody, now, sign } from './fixtures.js';

const SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
// The service retries for about 17.6 hours (PROTOCOL.md section 6): a done mark must outlive that.
const RETRY_WINDOW_MS = 17.6 * 3600 * 1000;

function concurrentBot(store: BotStore) {
  const bot = createBot({
    apiKey: 'ams_sk_test',
    webhookSecret: SECRET,
    baseUrl: 'http://127.0.0.1:9',
    concurrency: 'concurrent',
    ackTimeoutMs: 30,
    store,
    now,
  });
  const runs: string[] = [];
  let failNext = true;
  let openGate: () => void = () => undefined;
  const gate = new Promise<void>((open) => {
    openGate = open;
  });
  bot.onError(() => undefined);
  bot.on('message.received', async (ctx: MessageContext) => {
    runs.push(ctx.text);
    if (ctx.text === 'slow') await gate;
    if (ctx.text === 'boom' && failNext) {
      failNext = false;
      throw new Error('first run fails');
    }
  });
  const deliver = async (eventId: string, text: string) => {
    const body = messageReceivedBody(eventId, [text]);
    const headers = await sign(body, SECRET);
    const response = await bot.fetch(
      new Request('http://bot.test/webhook', { method: 'POST', headers, body }),
    );
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return { bot, runs, deliver, openGate };
}

describe("'concurrent' dedupe on the memory store", () => {
  it('answers duplicates, runs in flight and failed runs as the dedupe rules say', async () => {
    let later = 0;
    const store = createMemoryStore({ now: () => Date.now() + later });
    const { bot, runs, deliver, openGate } = concurrentBot(store);

    expect(await deliver('evt_1', 'hi')).toEqual({ status: 200, body: { received: true } });
    expect(await deliver('evt_1', 'hi')).toEqual({
      status: 200,
      body: { received: true, duplicate: true },
    });
    expect(runs).toEqual(['hi']);

    // Still running past ackTimeoutMs: 409, and so is its redelivery; then it is done.
    const slow = deliver('evt_2', 'slow');
    expect((await slow).status).toBe(409);
    expect((await deliver('evt_2', 'slow')).status).toBe(409);
    openGate();
    await bot.idle();
    expect(await deliver('evt_2', 'slow')).toEqual({
      status: 200,
      body: { received: true, duplicate: true },
    });

    // A failed run frees its claim: the retry runs the handler again.
    expect((await deliver('evt_3', 'boom')).status).toBe(500);
    expect(await deliver('evt_3', 'boom')).toEqual({ status: 200, body: { received: true } });
    expect(runs).toEqual(['hi', 'slow', 'boom', 'boom']);

    // The marks are in the bot's store, still done at the end of the service's retry window.
    later = RETRY_WINDOW_MS;
    expect([await store.get('dedupe:evt_1'), await store.get('dedupe:evt_3')]).toEqual(['done', 'done']);
    expect((await deliver('evt_1', 'hi')).body).toEqual({ received: true, duplicate: true });
    expect(runs).toHaveLength(4);
  });
});
