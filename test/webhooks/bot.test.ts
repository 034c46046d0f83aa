import { describe, expect, it, vi } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { createBot, type DedupeStore, generateWebhookSecret } from '../../src/webhooks/index.js';
import { NOW_SEC } from './fixtures.js';
import { createLoop, type Loop, replay, signedRequest } from './harness.js';

/** A promise the test settles by hand. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/** Records one real message.received delivery of the mock, without letting it reach the bot. */
async function recordMessage(loop: Loop, text = 'hello') {
  loop.record();
  await loop.post(text);
  const delivery = loop.recorded.at(-1);
  if (!delivery) throw new Error('the mock delivered nothing');
  return delivery;
}

const unknownEvent = (eventId: string) =>
  JSON.stringify({
    schema: 'svc.event.v1',
    eventId,
    type: 'agent.renamed',
    createdAt: new Date().toISOString(),
    agentId: 'agt_1',
    handle: 'new_name',
  });

describe('bot.fetch answers deliveries', () => {
  it('answers a verified webhook.test with 200 when no handler is registered', async () => {
    // createLoop's setWebhook only succeeds when the bot answered the mock's signed test with a 2xx.
    const loop = await createLoop();
    const tests = loop.mock.deliveries.filter((delivery) => delivery.type === 'webhook.test');
    expect(tests.map((delivery) => delivery.status)).toEqual([200]);
  });

  it('answers an unknown event type with 200 and hands it to onAny with every field', async () => {
    const loop = await createLoop();
    const seen: unknown[] = [];
    loop.bot.onAny((ctx) => {
      seen.push(ctx.event);
    });
    const body = unknownEvent('evt_unknown_1');
    const response = await loop.bot.fetch(await signedRequest(body, loop.secret));
    expect(response.status).toBe(200);
    expect(seen).toEqual([JSON.parse(body)]);
  });

  it('runs typed handlers of an event in order, then onAny, with the message context', async () => {
    const loop = await createLoop();
    const delivery = await recordMessage(loop, 'hello there');
    const calls: string[] = [];
    loop.bot.on('message.received', (ctx) => {
      calls.push(`first:${ctx.text}:${ctx.conversationId === loop.conversationId}`);
    });
    loop.bot.on('message.received', (ctx) => {
      calls.push(`second:${ctx.message.sender.id === loop.user.id}`);
    });
    loop.bot.on('invite.expired', () => {
      calls.push('wrong type');
    });
    loop.bot.onAny((ctx) => {
      calls.push(`any:${ctx.event.type}`);
    });
    const response = await loop.bot.fetch(replay(delivery));
    expect(response.status).toBe(200);
    expect(calls).toEqual(['first:hello there:true', 'second:true', 'any:message.received']);
  });

  it('is bound, so `export default { fetch: bot.fetch }` works', async () => {
    const loop = await createLoop();
    const { fetch } = loop.bot;
    const response = await fetch(await signedRequest(unknownEvent('evt_bound'), loop.secret));
    expect(response.status).toBe(200);
  });

  it('answers 405 to anything but POST', async () => {
    const loop = await createLoop();
    const response = await loop.bot.fetch(new Request('http://bot.test/webhook'));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('bot.fetch refuses deliveries that fail verification with a 4xx', () => {
  it('answers every attack with its code and never runs a handler', async () => {
    const loop = await createLoop();
    const handler = vi.fn();
    loop.bot.onAny(handler);
    const body = unknownEvent('evt_attack');
    const nowSec = Math.floor(Date.now() / 1000);
    const good = await signedRequest(body, loop.secret);
    const headersOf = (request: Request) => Object.fromEntries(request.headers);
    const attacks: [string, Request, number, string][] = [
      [
        'tampered body',
        new Request(good.url, {
          method: 'POST',
          headers: headersOf(good),
          body: body.replace('new_name', 'evil'),
        }),
        401,
        'no_matching_signature',
      ],
      ['wrong secret', await signedRequest(body, generateWebhookSecret()), 401, 'no_matching_signature'],
      [
        'stale timestamp',
        await signedRequest(body, loop.secret, { timestamp: nowSec - 3600 }),
        401,
        'timestamp_too_old',
      ],
      [
        'future timestamp',
        await signedRequest(body, loop.secret, { timestamp: nowSec + 3600 }),
        401,
        'timestamp_too_new',
      ],
      [
        'milliseconds',
        await signedRequest(body, loop.secret, { timestamp: nowSec * 1000 }),
        401,
        'timestamp_too_new',
      ],
      [
        'junk signature',
        await signedRequest(body, loop.secret, { headers: { 'webhook-signature': 'v1,AAAA' } }),
        401,
        'no_matching_signature',
      ],
      ['missing headers', new Request(good.url, { method: 'POST', body }), 400, 'missing_headers'],
      [
        'not a timestamp',
        await signedRequest(body, loop.secret, { headers: { 'webhook-timestamp': 'now' } }),
        400,
        'invalid_timestamp',
      ],
    ];
    for (const [name, request, status, code] of attacks) {
      const response = await loop.bot.fetch(request);
      const answer = (await response.json()) as { error: { code: string; message: string } };
      expect({ name, status: response.status, code: answer.error.code }).toEqual({ name, status, code });
      expect(answer.error.message).not.toContain(loop.secret.slice(6));
    }
    expect(handler).not.toHaveBeenCalled();
    // The genuine delivery still gets through afterwards.
    expect((await loop.bot.fetch(good)).status).toBe(200);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('logs a refused delivery at warn level without the secret', async () => {
    const warn = vi.fn();
    const loop = await createLoop({ logger: { debug: () => {}, warn } as never });
    await loop.bot.fetch(await signedRequest(unknownEvent('evt_w'), generateWebhookSecret()));
    expect(warn).toHaveBeenCalledWith(
      'webhook refused',
      expect.objectContaining({ code: 'no_matching_signature' }),
    );
    expect(JSON.stringify(warn.mock.calls)).not.toContain(loop.secret.slice(6));
  });
});

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

  it('answers 409 to a duplicate while the first is in flight, so the service retries it later', async () => {
    const loop = await createLoop();
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
    release.open();
    expect((await first).status).toBe(200);
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
    await vi.waitFor(() => expect(reported).toHaveBeenCalledTimes(1));
  });
});

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
    const executionCtx = {
      waitUntil(this: unknown, promise: Promise<unknown>) {
        // Workers throw "Illegal invocation" when waitUntil is called detached from its ctx.
        expect(this).toBe(executionCtx);
        waited.push(promise);
      },
    };
    const request = () => signedRequest(unknownEvent('evt_slow'), loop.secret);
    const response = await loop.bot.fetch(await request(), {}, executionCtx);
    expect(response.status).toBe(202);
    expect(finished).toBe(false);
    expect(waited).toHaveLength(1);
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

describe('createBot', () => {
  it('refuses bad options with a ValidationError naming each field and never the secret', () => {
    const secret = 'whsec_not-a-secret!';
    const attempt = () =>
      createBot({
        apiKey: '',
        webhookSecret: secret,
        baseUrl: 'http://ams.test',
        ack: 'later' as never,
        ackTimeoutMs: -1,
      });
    expect(attempt).toThrow(ValidationError);
    try {
      attempt();
    } catch (error) {
      const fields = (error as ValidationError).issues.map((issue) => issue.field);
      expect(fields).toEqual(expect.arrayContaining(['webhookSecret', 'ack', 'ackTimeoutMs', 'apiKey']));
      expect((error as Error).message).not.toContain('not-a-secret');
    }
  });

  it('accepts several webhook secrets while rotating', async () => {
    const previous = generateWebhookSecret();
    const next = generateWebhookSecret();
    const bot = createBot({
      apiKey: 'ams_sk_x',
      webhookSecret: [next, previous],
      baseUrl: 'http://ams.test',
    });
    for (const [index, secret] of [previous, next].entries()) {
      const response = await bot.fetch(await signedRequest(unknownEvent(`evt_rot_${index}`), secret));
      expect(response.status).toBe(200);
    }
  });

  it('checks webhook-timestamp against the `now` option', async () => {
    const secret = generateWebhookSecret();
    const bot = createBot({
      apiKey: 'ams_sk_x',
      webhookSecret: secret,
      baseUrl: 'http://ams.test',
      now: () => new Date(NOW_SEC * 1000),
    });
    const request = await signedRequest(unknownEvent('evt_clock'), secret, { timestamp: NOW_SEC - 10 });
    expect((await bot.fetch(request)).status).toBe(200);
  });
});
