import { createBot } from 'agent-messaging';
import { generateWebhookSecret } from 'agent-messaging/testing';
import { describe, expect, it, vi } from 'vitest';
import {
  createLoop,
  flakyStore,
  gate,
  recordMessage,
  replay,
  signedRequest,
  unknownEvent,
} from './harness.js';

describe('bot.fetch deduplicates by webhook-id', () => {
  it('answers a duplicate after success with 200 without running the handler again', async () => {
    const loop = await createLoop();
    const delivery = await recordMessage(loop);
    const handler = vi.fn();
    loop.bot.on('message.received', handler);
    expect((await loop.bot.fetch(replay(delivery))).status).toBe(200);
    const again = await loop.bot.fetch(replay(delivery));
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ duplicate: true });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('answers 409 to a duplicate still in flight after its wait of ackTimeoutMs, so the service retries it later', async () => {
    const loop = await createLoop({ ackTimeoutMs: 30 });
    const delivery = await recordMessage(loop);
    const release = gate();
    const started = gate();
    const handler = vi.fn(async () => {
      started.open();
      await release.opened;
    });
    loop.bot.on('message.received', handler);
    const first = loop.bot.fetch(replay(delivery));
    await started.opened;
    const duplicate = await loop.bot.fetch(replay(delivery));
    expect(duplicate.status).toBe(409);
    expect(((await duplicate.json()) as { error: { code: string } }).error.code).toBe('delivery_in_progress');
    expect((await first).status).toBe(409); // past ackTimeoutMs too: the run goes on
    release.open();
    await loop.bot.idle();
    expect((await loop.bot.fetch(replay(delivery))).status).toBe(200);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('answers 500 when a handler throws, reports it, and runs the handler again on the retry', async () => {
    const loop = await createLoop();
    const delivery = await recordMessage(loop);
    let attempts = 0;
    loop.bot.on('message.received', () => {
      attempts += 1;
      if (attempts === 1) throw new Error('model overloaded');
    });
    const errors: unknown[] = [];
    loop.bot.onError((error, info) => {
      errors.push([(error as Error).message, info.webhookId, info.event?.type]);
    });
    const failed = await loop.bot.fetch(replay(delivery));
    expect(failed.status).toBe(500);
    expect(errors).toEqual([['model overloaded', delivery.headers.get('webhook-id'), 'message.received']]);
    expect((await loop.bot.fetch(replay(delivery))).status).toBe(200);
    expect(attempts).toBe(2);
  });

  /** A bot on a store whose claim (setIfAbsent) fails until `down` no longer holds it. */
  function botOnFailingClaim(options: { ackTimeoutMs?: number } = {}) {
    const { store, failing: down } = flakyStore();
    down.add('setIfAbsent');
    const secret = generateWebhookSecret();
    const bot = createBot({
      apiKey: 'ams_sk_x',
      webhookSecret: secret,
      baseUrl: 'http://ams.test',
      store,
      ...options,
    });
    return {
      bot,
      down,
      deliver: async (id: string) => bot.fetch(await signedRequest(unknownEvent(id), secret)),
    };
  }

  it('answers 503, not 500, when the store fails at the claim for the whole of ackTimeoutMs', async () => {
    const { bot: other, deliver } = botOnFailingClaim({ ackTimeoutMs: 1000 });
    const handler = vi.fn();
    other.onAny(handler);
    const reported = vi.fn();
    other.onError(reported);
    const response = await deliver('evt_503');
    expect(response.status).toBe(503);
    expect(handler).not.toHaveBeenCalled();
    await vi.waitFor(() => expect(reported).toHaveBeenCalledTimes(1), { timeout: 10_000 });
  });

  it('rides out a store outage shorter than ackTimeoutMs at the claim: the delivery runs and is answered 200', async () => {
    const { bot: other, down, deliver } = botOnFailingClaim();
    let calls = 0;
    other.onAny(() => {
      calls += 1;
    });
    const answered = deliver('evt_outage');
    // The store comes back while the delivery still waits (ackTimeoutMs, 8 s: it tries again, 100 ms
    // then longer apart): a margin of seconds over this 300 ms outage, enough for a busy machine.
    setTimeout(() => down.delete('setIfAbsent'), 300);
    const response = await answered;
    expect(response.status).toBe(200);
    expect(calls).toBe(1);
  });
});
