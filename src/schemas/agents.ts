import * as z from 'zod/mini';
import { CAPABILITIES, Capabilities, HttpUrl, openEnum, type Wire } from './common.js';

/** `POST /v1/agents` request (PROTOCOL.md section 5). */
export const RegisterAgentRequest = z.strictObject({
  handle: z
    .string()
    .check(z.regex(/^[a-z0-9_]{3,32}$/, { error: 'must be 3 to 32 characters of a-z, 0-9 and _' })),
  display_name: z.string().check(z.minLength(1), z.maxLength(64)),
  webhook_url: HttpUrl,
  capabilities: Capabilities,
});
/** `POST /v1/agents` request (PROTOCOL.md section 5). */
export type RegisterAgentRequest = z.input<typeof RegisterAgentRequest>;

/** `status` of an agent. */
export const AgentStatus = openEnum(['pending_webhook', 'active']);
/** `webhook_status` of an agent. */
export const WebhookStatus = openEnum(['unverified', 'verified']);

/** The agent object. */
export const Agent = z.looseObject({
  id: z.string(),
  handle: z.string(),
  display_name: z.string(),
  status: AgentStatus,
  webhook_url: z.optional(z.string()),
  capabilities: z.optional(z.array(openEnum(CAPABILITIES))),
  webhook_status: z.optional(WebhookStatus),
});
/** The agent object. */
export type Agent = Wire<typeof Agent>;

/** `POST /v1/agents` response: the credentials are shown once. */
export const RegisterAgentResponse = z.looseObject({
  agent: Agent,
  api_key: z.string(),
  webhook_secret: z.string(),
});
/** `POST /v1/agents` response: the credentials are shown once. */
export type RegisterAgentResponse = Wire<typeof RegisterAgentResponse>;

/** `PATCH /v1/agents/{agent_id}/webhook` request. */
export const SetWebhookRequest = z.strictObject({
  webhook_url: HttpUrl,
  capabilities: z.optional(Capabilities),
});
/** `PATCH /v1/agents/{agent_id}/webhook` request. */
export type SetWebhookRequest = z.input<typeof SetWebhookRequest>;

/** `PATCH /v1/agents/{agent_id}/webhook` response. */
export const SetWebhookResponse = z.looseObject({
  agent_id: z.string(),
  webhook_url: z.string(),
  webhook_status: WebhookStatus,
});
/** `PATCH /v1/agents/{agent_id}/webhook` response. */
export type SetWebhookResponse = Wire<typeof SetWebhookResponse>;
