import { verifyWebhook } from 'agent-messaging';
import { generateWebhookSecret, signWebhook } from 'agent-messaging/testing';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { messageReceivedBody, NOW_SEC, now, rejection, testEventBody } from './fixtures.js';

const secret = generateWebhookSecret();

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
