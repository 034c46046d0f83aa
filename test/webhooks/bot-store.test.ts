// The bot store behind dedupe: shared between two bots, released on failure, and a store failure
// answers 503 so the service retries, with nothing marked done that was not.
import { type BotStore, createBot, createMemoryStore } from 'agent-messaging';
import { generateWebhookSecret } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
import { createLoop, flakyStore, recordMessage, replay } from './harness.js';

describe('createBot({ store })', () => {
  it('dedupes in the store: a redelivery to a second bot on the same store is a duplicate', async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store });
    const delivery = await recordMessage(loop);
    let runs = 0;
    loop.bot.on('message.received', () => {
      runs += 1;
    });
    const other = createBot({ apiKey: loop.apiKey, webhookSecret: loop.secret, ...loop.connection, store });
    other.on('message.received', () => {
      runs += 1;
    });
    expect((await loop.bot.fetch(replay(delivery))).status).toBe(200);
    const again = await other.fetch(replay(delivery));
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ duplicate: true });
    expect(runs).toBe(1);
    expect(await store.get(`dedupe:${delivery.headers.get('webhook-id')}`)).toBe('done');
  });

  it('releases the id when the handler fails, so the retry runs it', async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store });
    const delivery = await recordMessage(loop);
    let runs = 0;
    loop.bot.on('message.received', () => {
      runs += 1;
      if (runs === 1) throw new Error('model overloaded');
    });
    loop.bot.onError(() => undefined);
    expect((await loop.bot.fetch(replay(delivery))).status).toBe(500);
    expect(await store.get(`dedupe:${delivery.headers.get('webhook-id')}`)).toBeUndefined();
    expect((await loop.bot.fetch(replay(delivery))).status).toBe(200);
    expect(runs).toBe(2);
  });

  it('answers 503 when the store fails at the claim, and runs nothing', async () => {
    const { store, failing } = flakyStore();
    const loop = await createLoop({ store });
    const delivery = await recordMessage(loop);
    let runs = 0;
    loop.bot.on('message.received', () => {
      runs += 1;
    });
    loop.bot.onError(() => undefined);
    failing.add('setIfAbsent');
    failing.add('admit'); // the claim is the first write of the admit step
    const refused = await loop.bot.fetch(replay(delivery));
    expect(refused.status).toBe(503);
    expect(runs).toBe(0);
    failing.clear();
    expect((await loop.bot.fetch(replay(delivery))).status).toBe(200);
    expect(runs).toBe(1);
  });

  it('answers 503 when the handler ran but the store could not record it done; nothing is marked done', async () => {
    const { store, inner, failing } = flakyStore();
    const loop = await createLoop({ store });
    const delivery = await recordMessage(loop);
    loop.bot.on('message.received', () => {
      failing.add('set');
      failing.add('settle'); // the done mark is the first write of the settle step
    });
    loop.bot.onError(() => undefined);
    expect((await loop.bot.fetch(replay(delivery))).status).toBe(503);
    expect(await inner.get(`dedupe:${delivery.headers.get('webhook-id')}`)).not.toBe('done');
  });

  it('refuses a store that is not a BotStore, naming the option', () => {
    expect(() =>
      createBot({
        apiKey: 'ak_test',
        baseUrl: 'http://ams.test',
        webhookSecret: generateWebhookSecret(),
        store: {} as BotStore,
      }),
    ).toThrow(
      expect.objectContaining({
        name: 'ValidationError',
        issues: [expect.objectContaining({ field: 'store' })],
      }),
    );
  });
});
