// Acknowledgement: a run past ackTimeoutMs is answered 409 delivery_in_progress (not a 2xx), so the
// service keeps the delivery and its retry hears how the run ended: 200 duplicate once it succeeded,
// the message run again once it failed. `ack: 'immediately'` answers 202 at once, by choice.
import { type BotStore, createMemoryStore, type MessageContext } from 'agent-messaging';
import { describe, expect, it, vi } from 'vitest';
import { createLoop, gate, type Loop, signedRequest, unknownEvent } from './harness.js';

/** The answers to message.received deliveries, in order. */
const statuses = (loop: Loop) =>
  loop.mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status);
const say = (loop: Loop, text: string) =>
  loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text });
/** The texts of the replies the bot POSTed (the mock's request log, not the history). */
const postedReplies = (loop: Loop, before: number) =>
  loop.mock.requests
    .slice(before)
    .filter((entry) => entry.method === 'POST' && entry.path.endsWith('/messages'))
    .map((entry) => (JSON.parse(entry.body ?? '{}') as { fallbackText?: string }).fallbackText);
/** Runs the service's retries due 5 s after a 409, and waits for their answers and the bot's runs. */
async function nextRetries(loop: Loop) {
  await loop.mock.clock.advance(5);
  await loop.mock.idle();
  await loop.bot.idle();
}

/**
 * A memory store that opens `refused` once a claim was refused (a retry met the run in flight), so
 * a handler waiting on it ends only while that retry waits: no timing decides what the retry meets.
 */
function refusingStore() {
  const inner = createMemoryStore();
  const refused = gate();
  const store: BotStore = {
    ...inner,
    admit: async (request) => {
      const admitted = await inner.admit(request);
      if (!admitted.claimed) refused.open();
      return admitted;
    },
  };
  return { store, refused };
}

describe('bot.fetch acknowledges within ackTimeoutMs', () => {
  it('answers 409 when the handler outlives ackTimeoutMs, hands it to waitUntil, and answers its redelivery 200 duplicate once done', async () => {
    const loop = await createLoop({ ackTimeoutMs: 20 });
    const release = gate();
    let runs = 0;
    loop.bot.onAny(async () => {
      runs += 1;
      await release.opened;
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
    expect(response.status).toBe(409);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('delivery_in_progress');
    expect(waited).toHaveLength(1);
    // Workers throw "Illegal invocation" when waitUntil is called detached from its ctx.
    expect(receivers[0]).toBe(executionCtx);
    // Still running through a redelivery's whole wait: 409 again, nothing run twice.
    expect((await loop.bot.fetch(await request())).status).toBe(409);
    release.open();
    await waited[0];
    const after = await loop.bot.fetch(await request());
    expect(after.status).toBe(200);
    expect(await after.json()).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(1);
  });

  it("answers 202 at once with ack: 'immediately', before the handler ran to its end, and 409 at once to a redelivery meanwhile", async () => {
    const waitUntil = vi.fn();
    // A wait of ackTimeoutMs would outlast the test: nothing here may wait for the handler.
    const loop = await createLoop({ ack: 'immediately', ackTimeoutMs: 600_000, waitUntil });
    waitUntil.mockClear();
    const release = gate();
    let finished = false;
    loop.bot.onAny(async () => {
      await release.opened;
      finished = true;
    });
    const request = () => signedRequest(unknownEvent('evt_now'), loop.secret);
    const response = await loop.bot.fetch(await request());
    expect(response.status).toBe(202);
    expect(waitUntil).toHaveBeenCalledTimes(1);
    expect(finished).toBe(false);
    // A redelivery while it runs: 409 at once, no wait for the run.
    expect((await loop.bot.fetch(await request())).status).toBe(409);
    release.open();
    await waitUntil.mock.calls[0]?.[0];
    expect(finished).toBe(true);
  });

  it("releases the claim of a handler that fails after ack: 'immediately', and reports it", async () => {
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

describe("the service's retry of a delivery answered past ackTimeoutMs", () => {
  it('a slow handler that succeeds: 409, then the retry waits for the run and answers 200 duplicate; handled once', async () => {
    const { store, refused } = refusingStore();
    // 1 s: the retry's run (a reply) ends within it on a loaded machine; the first delivery waits it out.
    const loop = await createLoop({ store, ackTimeoutMs: 1000 });
    const handled: string[] = [];
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      await refused.opened; // the run ends only once its retry met it in flight
      handled.push(ctx.text);
      await ctx.reply(`re: ${ctx.text}`);
    });
    const before = loop.mock.requests.length;
    say(loop, 'slow');
    await loop.mock.idle();
    expect(statuses(loop)).toEqual([409]);
    expect(handled).toEqual([]);
    await nextRetries(loop);
    expect(statuses(loop)).toEqual([409, 200]);
    expect(handled).toEqual(['slow']);
    expect(postedReplies(loop, before)).toEqual(['re: slow']);
    expect((await loop.agentMessages()).map((m) => m.fallback_text)).toEqual(['re: slow']);
  });

  it('a slow handler that throws while the retry waits: the retry runs it again, one reply', async () => {
    const { store, refused } = refusingStore();
    // 1 s: the retry's run (a reply) ends within it on a loaded machine; the first delivery waits it out.
    const loop = await createLoop({ store, ackTimeoutMs: 1000 });
    loop.bot.onError(() => undefined);
    let runs = 0;
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      runs += 1;
      if (runs === 1) {
        await refused.opened; // fails only once its retry met it in flight
        throw new Error('the model timed out');
      }
      await ctx.reply(`re: ${ctx.text}`);
    });
    const before = loop.mock.requests.length;
    say(loop, 'flaky');
    await loop.mock.idle();
    expect(statuses(loop)).toEqual([409]);
    await nextRetries(loop);
    expect(statuses(loop)).toEqual([409, 200]);
    expect(runs).toBe(2);
    expect(postedReplies(loop, before)).toEqual(['re: flaky']);
  });

  it('a slow handler that throws after the 409, before any retry: the retry runs it, one reply', async () => {
    // 1 s: the retry's run (a reply) ends within it on a loaded machine; the first delivery waits it out.
    const loop = await createLoop({ ackTimeoutMs: 1000 });
    const failed = gate();
    loop.bot.onError(() => failed.open());
    const release = gate();
    let runs = 0;
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      runs += 1;
      if (runs === 1) {
        await release.opened;
        throw new Error('the process was redeployed');
      }
      await ctx.reply(`re: ${ctx.text}`);
    });
    const before = loop.mock.requests.length;
    say(loop, 'lost before');
    await loop.mock.idle();
    release.open();
    await failed.opened;
    await loop.bot.idle();
    expect(postedReplies(loop, before)).toEqual([]);
    await nextRetries(loop);
    expect(statuses(loop)).toEqual([409, 200]);
    expect(runs).toBe(2);
    expect(postedReplies(loop, before)).toEqual(['re: lost before']);
  });

  it('a message waiting behind another past ackTimeoutMs that then fails is run by its retry', async () => {
    // 1 s: the retry's run (a reply) ends within it on a loaded machine; the first delivery waits it out.
    const loop = await createLoop({ ackTimeoutMs: 1000 });
    loop.bot.onError(() => undefined);
    const first = gate();
    const started = gate();
    const handled: string[] = [];
    let failedOnce = false;
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      if (ctx.text === 'one') {
        started.open();
        await first.opened;
      }
      if (ctx.text === 'two' && !failedOnce) {
        failedOnce = true;
        throw new Error('two failed on its turn');
      }
      handled.push(ctx.text);
      await ctx.reply(`re: ${ctx.text}`);
    });
    const before = loop.mock.requests.length;
    say(loop, 'one');
    await started.opened;
    say(loop, 'two');
    await loop.mock.idle();
    // Both past ackTimeoutMs: 'one' running, 'two' waiting for the lock; neither answered a 2xx.
    expect(statuses(loop)).toEqual([409, 409]);
    first.open();
    await loop.bot.idle();
    expect(handled).toEqual(['one']);
    await nextRetries(loop);
    // 'one' was done (200 duplicate), 'two' ran again and succeeded.
    expect(statuses(loop)).toEqual([409, 409, 200, 200]);
    expect(handled).toEqual(['one', 'two']);
    expect(postedReplies(loop, before)).toEqual(['re: one', 're: two']);
  });
});
