// Webhook bodies as the service sends them (PROTOCOL.md section 6), and signing helpers for the tests.

import { WebhookVerificationError } from 'agent-messaging';
import { signWebhook } from 'agent-messaging/testing';
import { expect } from 'vitest';

/** A fixed clock for verification tests: 2023-11-14T22:13:20Z. */
export const NOW_SEC = 1_700_000_000;
export const now = () => new Date(NOW_SEC * 1000);

/** The body of a `webhook.test` event. */
export function testEventBody(eventId = 'evt_test_1'): string {
  return JSON.stringify({
    schema: 'svc.event.v1',
    eventId,
    type: 'webhook.test',
    createdAt: '2023-11-14T22:13:20.000Z',
    agentId: 'agt_1',
  });
}

/** The body of a `message.received` event whose message holds the given text parts. */
export function messageReceivedBody(eventId = 'evt_msg_1', texts: string[] = ['hello']): string {
  return JSON.stringify({
    schema: 'svc.event.v1',
    eventId,
    type: 'message.received',
    createdAt: '2023-11-14T22:13:20.000Z',
    agentId: 'agt_1',
    conversationId: 'cnv_1',
    message: {
      id: 'msg_1',
      conversation_id: 'cnv_1',
      sequence: 1,
      sender: { id: 'usr_1' },
      parts: texts.map((text, part_index) => ({ part_index, type: 'text', text })),
      fallback_text: texts.join(''),
      status: 'sent',
      created_at: '2023-11-14T22:13:20.000Z',
    },
  });
}

/** Signs a body the way the service does, at NOW_SEC unless told otherwise. */
export async function sign(body: string, secret: string, options: { id?: string; timestamp?: number } = {}) {
  const id = options.id ?? (JSON.parse(body) as { eventId?: string }).eventId ?? 'evt_x';
  return signWebhook({ id, payload: body, secret, timestamp: options.timestamp ?? NOW_SEC });
}

/** The error a verification rejects with; fails the test when it resolves or throws anything else. */
export async function rejection(promise: Promise<unknown>): Promise<WebhookVerificationError> {
  const error = await promise.then(
    () => expect.unreachable('verification should have failed'),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WebhookVerificationError);
  return error as WebhookVerificationError;
}
