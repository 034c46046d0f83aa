import * as z from 'zod';
import { GroupInvite } from './invites.js';
import { Message } from './messages.js';
import { parseByType } from './open-union.js';

// ---- Events delivered to the agent's webhook (PROTOCOL.md section 6) ----

const WebhookEventBase = z.looseObject({
  schema: z.string(),
  eventId: z.string(),
  type: z.string(),
  createdAt: z.string(),
  agentId: z.string(),
});

export const WebhookTestEvent = WebhookEventBase.extend({ type: z.literal('webhook.test') });
export type WebhookTestEvent = z.output<typeof WebhookTestEvent>;

export const MessageReceivedEvent = WebhookEventBase.extend({
  type: z.literal('message.received'),
  conversationId: z.string(),
  message: Message,
});
export type MessageReceivedEvent = z.output<typeof MessageReceivedEvent>;

export const InviteCompletedEvent = WebhookEventBase.extend({
  type: z.literal('invite.completed'),
  invite: GroupInvite,
  conversationId: z.string(),
});
export type InviteCompletedEvent = z.output<typeof InviteCompletedEvent>;

export const InviteExpiredEvent = WebhookEventBase.extend({
  type: z.literal('invite.expired'),
  invite: GroupInvite,
});
export type InviteExpiredEvent = z.output<typeof InviteExpiredEvent>;

/**
 * A webhook event. Receivers must accept types they do not know: such an event is passed through
 * as it came (its `type` is then none of these).
 */
export type WebhookEvent =
  | WebhookTestEvent
  | MessageReceivedEvent
  | InviteCompletedEvent
  | InviteExpiredEvent;
export type WebhookEventType = WebhookEvent['type'];

const webhookEventSchemas = {
  'webhook.test': WebhookTestEvent,
  'message.received': MessageReceivedEvent,
  'invite.completed': InviteCompletedEvent,
  'invite.expired': InviteExpiredEvent,
};

/** Checks a decoded webhook body; unknown event types keep the base shape only. */
export const parseWebhookEvent = (data: unknown) =>
  parseByType<WebhookEvent>(webhookEventSchemas, WebhookEventBase, data);
