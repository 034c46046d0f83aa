import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { AgentMessagingError } from '../../src/core/errors.js';
import {
  generateWebhookSecret,
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
} from '../../src/webhooks/index.js';
import { messageReceivedBody, NOW_SEC, now, sign, testEventBody } from './fixtures.js';

const secret = generateWebhookSecret();

/** The error a verification rejects with; fails the test when it resolves or throws anything else. */
async function rejection(promise: Promise<unknown>): Promise<WebhookVerificationError> {
  const error = await promise.then(
    () => expect.unreachable('verification should have failed'),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WebhookVerificationError);
  return error as WebhookVerificationError;
}

describe('verifyWebhook', () => {
  it('returns the typed event of a delivery signed with the secret', async () => {
    const body = messageReceivedBody('evt_1', ['hi ', 'there']);
    const event = await verifyWebhook(body, await sign(body, secret), { secret, now });
    expect(event.type).toBe('message.received');
    if (event.type !== 'message.received') throw new Error('narrowing');
    expect(event.conversationId).toBe('cnv_1');
    expect(event.message.parts?.map((part) => part.text)).toEqual(['hi ', 'there']);
  });

  it('passes an event type it does not know through with every field', async () => {
    const body = JSON.stringify({
      schema: 'svc.event.v1',
      eventId: 'evt_new',
      type: 'agent.suspended',
      createdAt: '2023-11-14T22:13:20.000Z',
      agentId: 'agt_1',
      reason: 'billing',
    });
    const event = await verifyWebhook(body, await sign(body, secret), { secret, now });
    expect(event).toEqual(JSON.parse(body));
  });

  it('accepts a Headers object, a record in any case, and array values', async () => {
    const body = testEventBody();
    const signed = await sign(body, secret);
    await expect(verifyWebhook(body, new Headers({ ...signed }), { secret, now })).resolves.toBeDefined();
    const shouting = {
      'Webhook-Id': signed['webhook-id'],
      'WEBHOOK-TIMESTAMP': [signed['webhook-timestamp']],
      'webhook-Signature': signed['webhook-signature'],
    };
    await expect(verifyWebhook(body, shouting, { secret, now })).resolves.toBeDefined();
  });

  it('accepts the body as a string, a Uint8Array, a Buffer or an ArrayBuffer', async () => {
    const body = testEventBody();
    const headers = await sign(body, secret);
    const bytes = new TextEncoder().encode(body);
    for (const raw of [body, bytes, Buffer.from(body), bytes.slice().buffer]) {
      await expect(verifyWebhook(raw, headers, { secret, now })).resolves.toMatchObject({
        type: 'webhook.test',
      });
    }
  });

  it('accepts a delivery carrying several signatures when one of them matches', async () => {
    const body = testEventBody();
    const signed = await sign(body, secret);
    const other = await sign(body, generateWebhookSecret());
    const headers = {
      ...signed,
      'webhook-signature': `v1,bm90IGl0 ${other['webhook-signature']} ${signed['webhook-signature']}`,
    };
    await expect(verifyWebhook(body, headers, { secret, now })).resolves.toBeDefined();
  });

  it('accepts the timestamp exactly at the tolerance and refuses one second past it', async () => {
    const body = testEventBody();
    for (const timestamp of [NOW_SEC - 300, NOW_SEC + 300]) {
      await expect(
        verifyWebhook(body, await sign(body, secret, { timestamp }), { secret, now }),
      ).resolves.toBeDefined();
    }
    const old = await sign(body, secret, { timestamp: NOW_SEC - 301 });
    expect((await rejection(verifyWebhook(body, old, { secret, now }))).code).toBe('timestamp_too_old');
    const wide = { secret, now, toleranceSec: 600 };
    await expect(verifyWebhook(body, old, wide)).resolves.toBeDefined();
  });
});

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

describe('verifyWebhook with several secrets', () => {
  it('accepts deliveries signed with either secret while rotating, and refuses a third', async () => {
    const previous = generateWebhookSecret();
    const next = generateWebhookSecret();
    const body = testEventBody();
    for (const signer of [previous, next]) {
      const headers = await sign(body, signer);
      await expect(verifyWebhook(body, headers, { secret: [next, previous], now })).resolves.toBeDefined();
    }
    const stranger = await sign(body, generateWebhookSecret());
    const error = await rejection(verifyWebhook(body, stranger, { secret: [next, previous], now }));
    expect(error.code).toBe('no_matching_signature');
  });

  it('refuses a secret that is not one, without echoing it', async () => {
    const body = testEventBody();
    const headers = await sign(body, secret);
    const bad = 'whsec_not base64 at all!';
    for (const option of [bad, [secret, bad], [], 42]) {
      const error = await rejection(verifyWebhook(body, headers, { secret: option as string, now }));
      expect(error.code).toBe('invalid_secret');
      expect(error.message).not.toContain('not base64');
      expect(error.message).not.toContain(secret.slice(6));
    }
  });
});

describe('interop with the standardwebhooks package', () => {
  it('verifies what standardwebhooks signs', async () => {
    const body = testEventBody('evt_interop');
    const timestamp = new Date(NOW_SEC * 1000);
    const signature = new Webhook(secret).sign('evt_interop', timestamp, body);
    const headers = {
      'webhook-id': 'evt_interop',
      'webhook-timestamp': String(NOW_SEC),
      'webhook-signature': signature,
    };
    await expect(verifyWebhook(body, headers, { secret, now })).resolves.toMatchObject({
      eventId: 'evt_interop',
    });
  });

  it('signs what standardwebhooks verifies', async () => {
    const body = messageReceivedBody('evt_interop');
    // standardwebhooks reads the real clock, so sign at the real time here.
    const headers = await signWebhook({ id: 'evt_interop', payload: body, secret });
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    const tampered = body.replace('hello', 'HELLO');
    expect(() => new Webhook(secret).verify(tampered, { ...headers })).toThrow('No matching signature');
  });

  // The vector of standard-webhooks/libraries/javascript/src/webhook.test.ts ("sign function works").
  const vector = {
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    timestamp: 1614265330,
    payload: '{"test": 2432232314}',
    signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  };

  it('reproduces the published Standard Webhooks test vector', async () => {
    const headers = await signWebhook(vector);
    expect(headers['webhook-signature']).toBe(vector.signature);
  });

  it('accepts the signature of the published vector, then refuses its payload as not an event', async () => {
    const headers = {
      'webhook-id': vector.id,
      'webhook-timestamp': String(vector.timestamp),
      'webhook-signature': vector.signature,
    };
    const options = { secret: vector.secret, now: () => new Date(vector.timestamp * 1000) };
    // Past the signature and the clock: only the event shape is left to fail.
    expect((await rejection(verifyWebhook(vector.payload, headers, options))).code).toBe('invalid_event');
    const flipped = { ...headers, 'webhook-signature': vector.signature.replace('g0hM', 'g0hN') };
    expect((await rejection(verifyWebhook(vector.payload, flipped, options))).code).toBe(
      'no_matching_signature',
    );
  });
});

describe('WebhookVerificationError', () => {
  it('is an AgentMessagingError recognized by both guards', async () => {
    const error = await rejection(verifyWebhook('', {}, { secret, now }));
    expect(error).toBeInstanceOf(AgentMessagingError);
    expect(AgentMessagingError.is(error)).toBe(true);
    expect(WebhookVerificationError.is(error)).toBe(true);
    expect(WebhookVerificationError.is(new AgentMessagingError('other'))).toBe(false);
    expect(error.name).toBe('WebhookVerificationError');
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
