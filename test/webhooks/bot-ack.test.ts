import { describe, expect, it, vi } from 'vitest';
import { createLoop, gate, signedRequest, unknownEvent } from './harness.js';

describe('bot.fetch acknowledges within ackTimeoutMs', () => {
  it('answers 202 when the handler outlives ackTimeoutMs, hands it to waitUntil, and completes it later', async () => {
    const loop = await createLoop({ ackTimeoutMs: 20 });
    const release = gate();
    let finished = false;
    loop.bot.onAny(async () => {
      await release.opened;
      finished = true;
    });
    const waited: Promise<unknown>[] = [];
    const receivers: unknown[] = [];
    const executionCtx = {
      waitUntil(this: unknown, promise: Promise<unknown>) {
        receivers.push(this);
        waited.push(promise);
      },
    };
    const request = () => signedRequest(unknownEvent('evt_slow'), loop.secret);
    const response = await loop.bot.fetch(await request(), {}, executionCtx);
    expect(response.status).toBe(202);
    expect(finished).toBe(false);
    expect(waited).toHaveLength(1);
    // Workers throw "Illegal invocation" when waitUntil is called detached from its ctx.
    expect(receivers[0]).toBe(executionCtx);
    // Still running: a retry now is a duplicate in flight.
    expect((await loop.bot.fetch(await request())).status).toBe(409);
    release.open();
    await waited[0];
    expect(finished).toBe(true);
    expect((await loop.bot.fetch(await request())).status).toBe(200);
  });

  it("answers 202 at once with ack: 'immediately', before the handler ran to its end", async () => {
    const waitUntil = vi.fn();
    const loop = await createLoop({ ack: 'immediately', waitUntil });
    waitUntil.mockClear();
    const release = gate();
    let finished = false;
    loop.bot.onAny(async () => {
      await release.opened;
      finished = true;
    });
    const response = await loop.bot.fetch(await signedRequest(unknownEvent('evt_now'), loop.secret));
    expect(response.status).toBe(202);
    expect(waitUntil).toHaveBeenCalledTimes(1);
    expect(finished).toBe(false);
    release.open();
    await waitUntil.mock.calls[0]?.[0];
    expect(finished).toBe(true);
  });

  it('releases the claim of a handler that fails after an early 202, and reports it', async () => {
    const loop = await createLoop({ ack: 'immediately' });
    let attempts = 0;
    loop.bot.onAny(async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('late failure');
    });
    const reported = gate();
    loop.bot.onError(() => reported.open());
    const request = () => signedRequest(unknownEvent('evt_late'), loop.secret);
    expect((await loop.bot.fetch(await request())).status).toBe(202);
    await reported.opened;
    expect((await loop.bot.fetch(await request())).status).toBe(202);
    expect(attempts).toBe(2);
  });
});
