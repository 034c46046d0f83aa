import { createBot, type DedupeStore } from 'agent-messaging';
import { generateWebhookSecret } from 'agent-messaging/testing';
import { describe, expect, it, vi } from 'vitest';
import { createLoop, gate, recordMessage, replay, signedRequest, unknownEvent } from './harness.js';

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

  it('uses a pluggable store: claim, then complete on success and release on failure', async () => {
    const calls: string[] = [];
    const states = new Map<string, 'in_flight' | 'done'>();
    const store: DedupeStore = {
      async claim(id) {
        calls.push(`claim ${id}`);
        const state = states.get(id);
        if (state) return state;
        states.set(id, 'in_flight');
        return 'claimed';
      },
      async complete(id) {
        calls.push(`complete ${id}`);
        states.set(id, 'done');
      },
      async release(id) {
        calls.push(`release ${id}`);
        states.delete(id);
      },
    };
    const loop = await createLoop({ dedupe: store });
    let fail = true;
    loop.bot.onAny(() => {
      if (fail) throw new Error('once');
    });
    loop.bot.onError(() => {});
    const request = () => signedRequest(unknownEvent('evt_store'), loop.secret);
    expect((await loop.bot.fetch(await request())).status).toBe(500);
    fail = false;
    expect((await loop.bot.fetch(await request())).status).toBe(200);
    expect((await loop.bot.fetch(await request())).status).toBe(200);
    const ours = calls.filter((call) => call.endsWith('evt_store'));
    expect(ours).toEqual([
      'claim evt_store',
      'release evt_store',
      'claim evt_store',
      'complete evt_store',
      'claim evt_store',
    ]);
  });

  it('answers 503, not 500, when the dedupe store fails', async () => {
    const failing: DedupeStore = {
      claim: () => Promise.reject(new Error('redis down')),
      complete: () => {},
      release: () => {},
    };
    const secret = generateWebhookSecret();
    const other = createBot({
      apiKey: 'ams_sk_x',
      webhookSecret: secret,
      baseUrl: 'http://ams.test',
      dedupe: failing,
    });
    const handler = vi.fn();
    other.onAny(handler);
    const reported = vi.fn();
    other.onError(reported);
    const response = await other.fetch(await signedRequest(unknownEvent('evt_503'), secret));
    expect(response.status).toBe(503);
    expect(handler).not.toHaveBeenCalled();
    await vi.waitFor(() => expect(reported).toHaveBeenCalledTimes(1), { timeout: 10_000 });
  });
});
