import { verifyWebhook, WebhookVerificationError } from 'agent-messaging';
import { generateWebhookSecret } from 'agent-messaging/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageReceivedBody, NOW_SEC, now, rejection, sign, testEventBody } from './fixtures.js';

const secret = generateWebhookSecret();

describe('verifyWebhook refuses an attack with a typed error', () => {
  it('refuses a tampered body', async () => {
    const body = messageReceivedBody('evt_1', ['pay 10']);
    const headers = await sign(body, secret);
    const tampered = body.replace('pay 10', 'pay 99');
    const error = await rejection(verifyWebhook(tampered, headers, { secret, now }));
    expect(error.code).toBe('no_matching_signature');
  });

  it('refuses a delivery signed with another secret', async () => {
    const body = testEventBody();
    const headers = await sign(body, generateWebhookSecret());
    expect((await rejection(verifyWebhook(body, headers, { secret, now }))).code).toBe(
      'no_matching_signature',
    );
  });

  it('refuses a replayed signature under a changed webhook-id or timestamp', async () => {
    const body = testEventBody();
    const signed = await sign(body, secret);
    const otherId = { ...signed, 'webhook-id': 'evt_other' };
    const otherTime = { ...signed, 'webhook-timestamp': String(NOW_SEC - 1) };
    for (const headers of [otherId, otherTime]) {
      expect((await rejection(verifyWebhook(body, headers, { secret, now }))).code).toBe(
        'no_matching_signature',
      );
    }
  });

  it('refuses a stale timestamp and a future one', async () => {
    const body = testEventBody();
    const stale = await sign(body, secret, { timestamp: NOW_SEC - 3600 });
    const future = await sign(body, secret, { timestamp: NOW_SEC + 3600 });
    expect((await rejection(verifyWebhook(body, stale, { secret, now }))).code).toBe('timestamp_too_old');
    expect((await rejection(verifyWebhook(body, future, { secret, now }))).code).toBe('timestamp_too_new');
  });

  it('refuses a timestamp in milliseconds and says so', async () => {
    const body = testEventBody();
    const headers = await sign(body, secret, { timestamp: NOW_SEC * 1000 });
    const error = await rejection(verifyWebhook(body, headers, { secret, now }));
    expect(error.code).toBe('timestamp_too_new');
    expect(error.message).toContain('milliseconds');
  });

  it('refuses a timestamp that is not a number of seconds', async () => {
    const body = testEventBody();
    const signed = await sign(body, secret);
    for (const timestamp of ['soon', '1.7e9', '-5', '1700000000.5']) {
      const error = await rejection(
        verifyWebhook(body, { ...signed, 'webhook-timestamp': timestamp }, { secret, now }),
      );
      expect(error.code).toBe('invalid_timestamp');
    }
  });

  it('refuses a delivery missing any of the three headers, naming it', async () => {
    const body = testEventBody();
    const signed = await sign(body, secret);
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const { [name]: _dropped, ...headers } = signed;
      const error = await rejection(verifyWebhook(body, headers, { secret, now }));
      expect(error.code).toBe('missing_headers');
      expect(error.message).toContain(name);
      const blank = await rejection(verifyWebhook(body, { ...signed, [name]: '  ' }, { secret, now }));
      expect(blank.code).toBe('missing_headers');
    }
  });

  it('refuses junk in webhook-signature', async () => {
    const body = testEventBody();
    const signed = await sign(body, secret);
    const valid = signed['webhook-signature'].slice(3);
    for (const junk of [
      'v1,',
      'v1,junk',
      'garbage',
      `v2,${valid}`,
      valid,
      `v1,${valid.slice(0, 8)}`,
      'v1,,,, ,',
    ]) {
      const error = await rejection(
        verifyWebhook(body, { ...signed, 'webhook-signature': junk }, { secret, now }),
      );
      expect(error.code).toBe('no_matching_signature');
    }
  });

  it('refuses a parsed body with a message on how to get the raw one', async () => {
    const body = testEventBody();
    const headers = await sign(body, secret);
    // What Express's express.json() leaves in req.body.
    const parsed = JSON.parse(body) as never;
    const error = await rejection(verifyWebhook(parsed, headers, { secret, now }));
    expect(error.code).toBe('body_already_parsed');
    expect(error.message).toContain("express.raw({ type: 'application/json' })");
    expect(error.message).toContain('await request.text()');
  });

  it('refuses a signed body that is not JSON, and signed JSON that is not an event', async () => {
    const notJson = '{"schema": "svc.event.v1",';
    const error = await rejection(
      verifyWebhook(notJson, await sign(notJson, secret, { id: 'evt_1' }), { secret, now }),
    );
    expect(error.code).toBe('invalid_json');
    const noEventId = JSON.stringify({ ...JSON.parse(testEventBody()), eventId: undefined });
    const shape = await rejection(
      verifyWebhook(noEventId, await sign(noEventId, secret, { id: 'evt_1' }), { secret, now }),
    );
    expect(shape.code).toBe('invalid_event');
    expect(shape.message).toContain('eventId');
  });
});

describe('verifyWebhook on malformed input', () => {
  it('answers a typed error for null, numbers and odd containers, never a TypeError', async () => {
    const body = testEventBody();
    const signed = await sign(body, secret);
    const cases: [unknown, unknown, unknown][] = [
      [null, signed, { secret, now }],
      [undefined, signed, { secret, now }],
      [42, signed, { secret, now }],
      [body, null, { secret, now }],
      [body, 'webhook-id: x', { secret, now }],
      [body, { get: 'not a function', ...signed, 'webhook-id': 7 }, { secret, now }],
      [body, signed, undefined],
      [body, signed, { secret, now, toleranceSec: -1 }],
    ];
    for (const [rawBody, headers, options] of cases) {
      await rejection(verifyWebhook(rawBody as string, headers as Headers, options as { secret: string }));
    }
  });

  it('refuses a clock that is not a function answering a valid Date, instead of accepting any timestamp', async () => {
    const body = testEventBody();
    // Signed a day off the real clock: a clock whose time is NaN would let it through.
    const stale = await sign(body, secret, { timestamp: Math.floor(Date.now() / 1000) - 86_400 });
    const clocks: unknown[] = [
      () => new Date('not a date'),
      'x',
      () => Date.now(),
      () => undefined,
      () => {
        throw new Error('clock broke');
      },
    ];
    for (const clock of clocks) {
      const error = await rejection(verifyWebhook(body, stale, { secret, now: clock as () => Date }));
      expect([error.code, error.message]).toEqual(['invalid_options', expect.stringMatching(/^now: /)]);
    }
  });

  it('turns headers whose reading throws into a WebhookVerificationError naming the header', async () => {
    const body = testEventBody();
    const signed = await sign(body, secret);
    const throwingGet = {
      get() {
        throw new Error('boom');
      },
    };
    const throwingRecord = new Proxy(signed, {
      get() {
        throw new Error('boom');
      },
      ownKeys() {
        throw new Error('boom');
      },
    });
    for (const headers of [throwingGet, throwingRecord]) {
      const error = await rejection(verifyWebhook(body, headers, { secret, now }));
      expect(error.code).toBe('missing_headers');
      expect(error.message).toMatch(/webhook-id/);
    }
  });

  it('turns any input at all into an event or a WebhookVerificationError', async () => {
    const headerValue = fc.oneof(fc.string(), fc.array(fc.string()), fc.anything());
    const headers = fc.oneof(
      fc.anything(),
      fc.record({
        'webhook-id': headerValue,
        'webhook-timestamp': headerValue,
        'webhook-signature': headerValue,
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.anything(), fc.string(), fc.uint8Array()),
        headers,
        async (rawBody, rawHeaders) => {
          const outcome = await verifyWebhook(rawBody as string, rawHeaders as Headers, {
            secret,
            now,
          }).catch((error: unknown) => error);
          expect(WebhookVerificationError.is(outcome)).toBe(true);
        },
      ),
    );
  });
});
