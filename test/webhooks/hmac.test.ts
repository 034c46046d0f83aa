// The two HMAC paths (node:crypto on Node, Web Crypto elsewhere) sign alike, and alike with the
// reference implementation, so a bot verifies the same deliveries on every runtime.

import * as nodeCrypto from 'node:crypto';
import { verifyWebhook } from 'agent-messaging';
import { generateWebhookSecret } from 'agent-messaging/testing';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
// Private: a unit test of the HMAC signer behind signWebhook and verifyWebhook.
import { createSigner } from '../../src/webhooks/verify.js';

describe('the HMAC signer of a webhook secret', () => {
  const secret = generateWebhookSecret();
  const key = Uint8Array.from(Buffer.from(secret.slice('whsec_'.length), 'base64'));
  const body = new TextEncoder().encode('{"text":"héllo 日本"}');

  it('signs the same with node:crypto and with Web Crypto, as standardwebhooks does', async () => {
    const reference = new Webhook(secret).sign('evt_1', new Date(1_700_000_000_000), '{"text":"héllo 日本"}');
    const viaNode = await createSigner(key, nodeCrypto)('evt_1', 1_700_000_000, body);
    const viaWeb = await createSigner(key, null)('evt_1', 1_700_000_000, body);
    expect(`v1,${viaNode}`).toBe(reference);
    expect(viaWeb).toBe(viaNode);
  });

  it('signs again with the key it prepared once (Web Crypto keeps its imported key)', async () => {
    const sign = createSigner(key, null);
    const first = await sign('evt_1', 1, body);
    expect(await sign('evt_1', 1, body)).toBe(first);
    expect(await sign('evt_2', 1, body)).not.toBe(first);
  });

  it('verifies a delivery signed by standardwebhooks, and refuses it under another secret', async () => {
    const payload = JSON.stringify({
      schema: 'svc.event.v1',
      eventId: 'evt_ref',
      type: 'agent.renamed',
      createdAt: '2023-11-14T22:13:20.000Z',
      agentId: 'agt_1',
    });
    const at = new Date(1_700_000_000_000);
    const headers = {
      'webhook-id': 'evt_ref',
      'webhook-timestamp': '1700000000',
      'webhook-signature': new Webhook(secret).sign('evt_ref', at, payload),
    };
    const event = await verifyWebhook(payload, headers, { secret, now: () => at });
    expect(event.eventId).toBe('evt_ref');
    await expect(
      verifyWebhook(payload, headers, { secret: generateWebhookSecret(), now: () => at }),
    ).rejects.toMatchObject({ code: 'no_matching_signature' });
  });
});
