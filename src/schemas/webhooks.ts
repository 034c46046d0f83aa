import * as z from 'zod/mini';
import type { Wire } from './common.js';
import { GroupInvite } from './invites.js';
import { Message } from './messages.js';

// ---- Events delivered to the agent's webhook (PROTOCOL.md section 6) ----

/** What every webhook event has, whatever its type: an unknown type is checked against this only. @internal */
export const WebhookEventBase = z.looseObject({
  schema: z.string(),
  eventId: z.string(),
  type: z.string(),
  createdAt: z.string(),
  agentId: z.string(),
});

/** `webhook.test`: sent when the webhook URL is set; a 2xx answer verifies it. */
export const WebhookTestEvent = z.extend(WebhookEventBase, { type: z.literal('webhook.test') });
/** `webhook.test`: sent when the webhook URL is set; a 2xx answer verifies it. */
export type WebhookTestEvent = Wire<typeof WebhookTestEvent>;

/** The quick reply a user clicked (PROTOCOL.md section 14): only in the body of a click's delivery. */
export const Postback = z.looseObject({ actionId: z.string(), value: z.string(), messageId: z.string() });
/** The quick reply a user clicked (PROTOCOL.md section 14): only in the body of a click's delivery. */
export type Postback = Wire<typeof Postback>;

/** `message.received`: a user posted in a conversation where the agent is active. */
export const MessageReceivedEvent = z.extend(WebhookEventBase, {
  type: z.literal('message.received'),
  conversationId: z.string(),
  message: Message,
  postback: z.optional(Postback),
});
/** `message.received`: a user posted in a conversation where the agent is active. */
export type MessageReceivedEvent = Wire<typeof MessageReceivedEvent>;

/** `invite.completed`: every target accepted; the group exists. */
export const InviteCompletedEvent = z.extend(WebhookEventBase, {
  type: z.literal('invite.completed'),
  invite: GroupInvite,
  conversationId: z.string(),
});
/** `invite.completed`: every target accepted; the group exists. */
export type InviteCompletedEvent = Wire<typeof InviteCompletedEvent>;

/** `invite.expired`: the invite's lifetime elapsed. */
export const InviteExpiredEvent = z.extend(WebhookEventBase, {
  type: z.literal('invite.expired'),
  invite: GroupInvite,
});
/** `invite.expired`: the invite's lifetime elapsed. */
export type InviteExpiredEvent = Wire<typeof InviteExpiredEvent>;

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

/** The schema of each known event type, by type (the verification's last check, webhooks/verify.ts). @internal */
export const webhookEventSchemas = {
  'webhook.test': WebhookTestEvent,
  'message.received': MessageReceivedEvent,
  'invite.completed': InviteCompletedEvent,
  'invite.expired': InviteExpiredEvent,
};
