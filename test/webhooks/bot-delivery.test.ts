import { type ContextFor, createBot, type MessageContext, ValidationError } from 'agent-messaging';
import { generateWebhookSecret } from 'agent-messaging/testing';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { NOW_SEC } from './fixtures.js';
import { createLoop, recordMessage, replay, signedRequest, unknownEvent } from './harness.js';

describe('bot.handleDelivery, the one entry', () => {
  it('answers a raw body and a plain header record with the status, headers and body to write', async () => {
    const loop = await createLoop();
    const delivery = await recordMessage(loop, 'straight in');
    const texts: string[] = [];
    loop.bot.on('message.received', (ctx) => {
      texts.push(ctx.text);
    });
    // As node:http gives them: lower-case names in a plain object, the body as bytes.
    const headers = Object.fromEntries(delivery.headers);
    const { handleDelivery } = loop.bot;
    const first = await handleDelivery(new TextEncoder().encode(delivery.body), headers);
    expect(first).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json', 'content-length': '17' },
      body: '{"received":true}',
    });
    // The body as text is the same delivery: answered as a duplicate, not run again.
    const again = await handleDelivery(delivery.body, headers);
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toEqual({ received: true, duplicate: true });
    expect(Number(again.headers['content-length'])).toBe(new TextEncoder().encode(again.body).length);
    expect(texts).toEqual(['straight in']);
  });

  it('refuses a parsed object as the body with 400 body_already_parsed, running nothing', async () => {
    const loop = await createLoop();
    const delivery = await recordMessage(loop);
    const ran = vi.fn();
    loop.bot.onAny(ran);
    const parsed = JSON.parse(delivery.body) as unknown as string;
    const answer = await loop.bot.handleDelivery(parsed, delivery.headers);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error.code).toBe('body_already_parsed');
    expect(ran).not.toHaveBeenCalled();
  });

  it("hands the work after an early answer to the call's waitUntil", async () => {
    const loop = await createLoop({ ack: 'immediately' });
    const delivery = await recordMessage(loop, 'later');
    let finished = false;
    loop.bot.on('message.received', async () => {
      finished = true;
    });
    const handed: Promise<unknown>[] = [];
    const answer = await loop.bot.handleDelivery(delivery.body, delivery.headers, {
      waitUntil: (work) => handed.push(work),
    });
    expect(answer.status).toBe(202);
    expect(handed).toHaveLength(1);
    await handed[0];
    expect(finished).toBe(true);
  });
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

describe('createBot', () => {
  it('refuses a webhook secret too short to be safe, naming the field and never the secret', () => {
    const short = `whsec_${Buffer.from([7]).toString('base64')}`;
    const rotating = [generateWebhookSecret(), `whsec_${Buffer.alloc(23, 1).toString('base64')}`];
    for (const [webhookSecret, field] of [
      [short, 'webhookSecret'],
      [rotating, 'webhookSecret[1]'],
    ] as const) {
      let error: unknown;
      try {
        createBot({ apiKey: 'ams_sk_test', webhookSecret, baseUrl: 'http://ams.test' });
      } catch (caught) {
        error = caught;
      }
      expect(ValidationError.is(error)).toBe(true);
      const issues = (error as ValidationError).issues;
      expect(issues).toEqual([{ field, message: expect.stringMatching(/too short.*at least 24 bytes/) }]);
      expect((error as Error).message).not.toContain(short.slice(6));
    }
    // 24 bytes, the shortest Standard Webhooks allows, is a secret.
    const shortest = `whsec_${Buffer.alloc(24, 1).toString('base64')}`;
    expect(() =>
      createBot({ apiKey: 'ams_sk_test', webhookSecret: shortest, baseUrl: 'http://ams.test' }),
    ).not.toThrow();
  });

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

  it('names options in a ValidationError when given no options object', () => {
    for (const options of [undefined, null, 'ams_sk_x']) {
      const error = (() => {
        try {
          createBot(options as never);
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(ValidationError.is(error) && error.field).toBe('options');
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

describe('bot.on types', () => {
  it('types each handler context by its event type', () => {
    expectTypeOf<ContextFor<'message.received'>>().toEqualTypeOf<MessageContext>();
    expectTypeOf<ContextFor<'invite.completed'>['event']['conversationId']>().toEqualTypeOf<string>();
    expectTypeOf<ContextFor<'invite.expired'>['event']['type']>().toEqualTypeOf<'invite.expired'>();
    expectTypeOf<ContextFor<'agent.renamed'>['event']['eventId']>().toEqualTypeOf<string>();
  });
});
