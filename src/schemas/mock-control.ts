import * as z from 'zod/mini';
import { AgentId, UserId } from './common.js';
import { Action, MAX_MESSAGE_TEXT, Message } from './messages.js';
import { MAX_ADVANCE_SECONDS } from './mock-limits.js';

// ---- The mock's control surface under /_mock (PROTOCOL.md section 13) ----

/** `POST /_mock/users` request. */
export const CreateUserRequest = z.strictObject({
  display_name: z.string().check(z.minLength(1), z.maxLength(64)),
  verified: z.optional(z.boolean()),
});
/** `POST /_mock/users` request. */
export type CreateUserRequest = z.input<typeof CreateUserRequest>;

/** `POST /_mock/users` response: the user and its session token. */
export const CreateUserResponse = z.looseObject({
  user: z.looseObject({ id: z.string(), display_name: z.string() }),
  session_token: z.string(),
});
/** `POST /_mock/users` response: the user and its session token. */
export type CreateUserResponse = z.output<typeof CreateUserResponse>;

/** `POST /_mock/installs` request. */
export const InstallRequest = z.strictObject({ user_id: UserId, agent_id: AgentId });
/** `POST /_mock/installs` request. */
export type InstallRequest = z.input<typeof InstallRequest>;

/** `POST /_mock/installs` response. */
export const InstallResponse = z.looseObject({ conversation_id: z.string() });
/** `POST /_mock/installs` response. */
export type InstallResponse = z.output<typeof InstallResponse>;

/** `POST /_mock/conversations/{id}/user-messages` request. */
export const UserMessageRequest = z.strictObject({
  user_id: UserId,
  text: z.string().check(z.minLength(1), z.maxLength(MAX_MESSAGE_TEXT)),
});
/** `POST /_mock/conversations/{id}/user-messages` request. */
export type UserMessageRequest = z.input<typeof UserMessageRequest>;

/** `POST /_mock/conversations/{id}/user-messages` response. */
export const UserMessageResponse = z.looseObject({ message: Message });
/** `POST /_mock/conversations/{id}/user-messages` response. */
export type UserMessageResponse = z.output<typeof UserMessageResponse>;

/** `POST /_mock/conversations/{id}/postbacks` request: the user clicks a quick reply (section 14). */
export const ClickActionRequest = z.strictObject({
  user_id: UserId,
  message_id: z.string().check(z.minLength(1)),
  action_id: Action.shape.actionId,
});
/** `POST /_mock/conversations/{id}/postbacks` request: the user clicks a quick reply (section 14). */
export type ClickActionRequest = z.input<typeof ClickActionRequest>;

/** `POST /_mock/conversations/{id}/postbacks` response: the message the click posted. */
export const ClickActionResponse = z.looseObject({ message: Message });
/** `POST /_mock/conversations/{id}/postbacks` response: the message the click posted. */
export type ClickActionResponse = z.output<typeof ClickActionResponse>;

/** `POST /_mock/clock/advance` request: 0 to ten years. */
export const ClockAdvanceRequest = z.strictObject({
  seconds: z.number().check(z.minimum(0), z.maximum(MAX_ADVANCE_SECONDS)),
});
/** `POST /_mock/clock/advance` request: 0 to ten years. */
export type ClockAdvanceRequest = z.input<typeof ClockAdvanceRequest>;

const FaultBase = {
  method: z.optional(z.string().check(z.minLength(1))),
  path: z.string().check(z.startsWith('/')),
  times: z.optional(z.int().check(z.minimum(1))),
};

/** A fault to inject into the next matching requests. */
export const FaultSpec = z.discriminatedUnion('fault', [
  z.strictObject({
    ...FaultBase,
    fault: z.literal('status'),
    status: z.int().check(z.minimum(400), z.maximum(599)),
    retry_after: z.optional(z.number().check(z.minimum(0))),
    code: z.optional(z.string()),
  }),
  z.strictObject({ ...FaultBase, fault: z.literal('drop_after_commit') }),
  z.strictObject({ ...FaultBase, fault: z.literal('delay'), delay_ms: z.int().check(z.minimum(0)) }),
  z.strictObject({ ...FaultBase, fault: z.literal('cut_stream'), after_events: z.int().check(z.minimum(0)) }),
  z.strictObject({ ...FaultBase, fault: z.literal('refuse_streamed_body') }),
]);
/** A fault to inject into the next matching requests. */
export type FaultSpec = z.input<typeof FaultSpec>;

/** One webhook delivery attempt the mock made. */
export const Delivery = z.looseObject({
  event_id: z.string(),
  type: z.string(),
  url: z.string(),
  attempt: z.int(),
  status: z.nullable(z.int()),
  at: z.string(),
  error: z.nullish(z.string()),
});
/** One webhook delivery attempt the mock made. */
export type Delivery = z.output<typeof Delivery>;

/** One `/v1` request as the mock recorded it on arrival. */
export const RequestLogEntry = z.looseObject({
  method: z.string(),
  path: z.string(),
  query: z.record(z.string(), z.string()),
  headers: z.record(z.string(), z.string()),
  body: z.nullable(z.string()),
});
/** One `/v1` request as the mock recorded it on arrival. */
export type RequestLogEntry = z.output<typeof RequestLogEntry>;
