import { createHmac } from 'node:crypto';
import {
  AgentMessagingError,
  ValidationError,
  verifyWebhook,
  WebhookVerificationError,
} from 'agent-messaging';
import { generateWebhookSecret, signWebhook } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
import { messageReceivedBody, NOW_SEC, now, rejection, sign, testEventBody } from './fixtures.js';

const secret = generateWebhookSecret();

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

  it('refuses a signed message.received of the wrong shape with invalid_event, naming the bad field', async () => {
    const body = messageReceivedBody('evt_shape').replace('"sequence":1', '"sequence":1.5');
    const refused = await rejection(verifyWebhook(body, await sign(body, secret), { secret, now }));
    expect(refused.code).toBe('invalid_event');
    expect(refused.message).toMatch(/^message\.sequence: the signed body is not a webhook event \(/);
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

  it('reads one signature however a runtime hands it over: alone, joined with a comma, padded with blanks', async () => {
    const body = testEventBody();
    const signed = await sign(body, secret);
    const one = signed['webhook-signature'];
    for (const given of [one, `${one},`, `${one}, `, ` ${one}`, `\t${one}\t`, `v1,bm90IGl0,\t${one}`]) {
      const headers = { ...signed, 'webhook-signature': given };
      await expect(verifyWebhook(body, headers, { secret, now })).resolves.toBeDefined();
    }
    for (const glued of [`${one}${one}`, `${one}v1,bm90IGl0`, `x${one}`, one.replace('v1,', 'V1,')]) {
      const headers = { ...signed, 'webhook-signature': glued };
      expect((await rejection(verifyWebhook(body, headers, { secret, now }))).code).toBe(
        'no_matching_signature',
      );
    }
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

describe('a webhook secret too short to be safe', () => {
  const short = `whsec_${Buffer.from([7]).toString('base64')}`;

  it('is refused by verifyWebhook with invalid_secret, even when the delivery was signed with it', async () => {
    const body = testEventBody();
    const headers = {
      'webhook-id': 'evt_test_1',
      'webhook-timestamp': String(NOW_SEC),
      'webhook-signature': `v1,${createHmac('sha256', Buffer.from([7]))
        .update(`evt_test_1.${NOW_SEC}.${body}`)
        .digest('base64')}`,
    };
    const error = await rejection(verifyWebhook(body, headers, { secret: short, now }));
    expect(error.code).toBe('invalid_secret');
    expect(error.message).toMatch(/^secret: is too short to be safe/);
  });

  it('is refused by signWebhook with a ValidationError naming the secret field', async () => {
    const error = await signWebhook({ id: 'evt_1', payload: '{}', secret: short }).catch((caught) => caught);
    expect(ValidationError.is(error)).toBe(true);
    expect((error as ValidationError).issues.map((issue) => issue.field)).toEqual(['secret']);
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

describe('signWebhook', () => {
  it('signs bytes and text alike, at a Date or Unix seconds, and verifyWebhook accepts the result', async () => {
    const body = testEventBody();
    const fromText = await signWebhook({ id: 'evt_test_1', payload: body, secret, timestamp: NOW_SEC });
    const fromBytes = await signWebhook({
      id: 'evt_test_1',
      payload: new TextEncoder().encode(body),
      secret,
      timestamp: now(),
    });
    expect(fromBytes).toEqual(fromText);
    await expect(verifyWebhook(body, fromText, { secret, now })).resolves.toMatchObject({
      type: 'webhook.test',
    });
  });

  it.each([
    ['secret', { secret: 'not a secret' }],
    ['secret', { secret: undefined }],
    ['id', { id: undefined }],
    ['id', { id: '' }],
    ['id', { id: 42 }],
    ['payload', { payload: { type: 'webhook.test' } }],
    ['payload', { payload: undefined }],
    ['timestamp', { timestamp: new Date('not a date') }],
    ['timestamp', { timestamp: 1.5 }],
  ])('names %s in a ValidationError for a bad value, without echoing the secret', async (field, change) => {
    const input = { id: 'evt_1', payload: testEventBody(), secret, ...change };
    const error = await signWebhook(input as Parameters<typeof signWebhook>[0]).catch((e: unknown) => e);
    expect(ValidationError.is(error) && error.field).toBe(field);
    expect((error as Error).message).not.toContain(secret.slice(6));
  });
});
