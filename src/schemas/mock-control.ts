import * as z from 'zod';
import { AgentId, UserId } from './common.js';
import { Message } from './messages.js';

// ---- The mock's control surface under /_mock (PROTOCOL.md section 13) ----

export const CreateUserRequest = z.strictObject({
  display_name: z.string().min(1).max(64),
  verified: z.boolean().optional(),
});
export type CreateUserRequest = z.input<typeof CreateUserRequest>;

export const CreateUserResponse = z.looseObject({
  user: z.looseObject({ id: z.string(), display_name: z.string() }),
  session_token: z.string(),
});
export type CreateUserResponse = z.output<typeof CreateUserResponse>;

export const InstallRequest = z.strictObject({ user_id: UserId, agent_id: AgentId });
export type InstallRequest = z.input<typeof InstallRequest>;

export const InstallResponse = z.looseObject({ conversation_id: z.string() });
export type InstallResponse = z.output<typeof InstallResponse>;

export const UserMessageRequest = z.strictObject({ user_id: UserId, text: z.string().min(1).max(32_000) });
export type UserMessageRequest = z.input<typeof UserMessageRequest>;

export const UserMessageResponse = z.looseObject({ message: Message });
export type UserMessageResponse = z.output<typeof UserMessageResponse>;

export const ClockAdvanceRequest = z.strictObject({ seconds: z.number().min(0) });
export type ClockAdvanceRequest = z.input<typeof ClockAdvanceRequest>;

const FaultBase = {
  method: z.string().min(1).optional(),
  path: z.string().startsWith('/'),
  times: z.int().min(1).optional(),
};

/** A fault to inject into the next matching requests. */
export const FaultSpec = z.discriminatedUnion('fault', [
  z.strictObject({
    ...FaultBase,
    fault: z.literal('status'),
    status: z.int().min(400).max(599),
    retry_after: z.number().min(0).optional(),
    code: z.string().optional(),
  }),
  z.strictObject({ ...FaultBase, fault: z.literal('drop_after_commit') }),
  z.strictObject({ ...FaultBase, fault: z.literal('delay'), delay_ms: z.int().min(0) }),
  z.strictObject({ ...FaultBase, fault: z.literal('cut_stream'), after_events: z.int().min(0) }),
  z.strictObject({ ...FaultBase, fault: z.literal('refuse_streamed_body') }),
]);
export type FaultSpec = z.input<typeof FaultSpec>;

/** One webhook delivery attempt the mock made. */
export const Delivery = z.looseObject({
  event_id: z.string(),
  type: z.string(),
  url: z.string(),
  attempt: z.int(),
  status: z.int().nullable(),
  at: z.string(),
  error: z.string().nullish(),
});
export type Delivery = z.output<typeof Delivery>;

/** One `/v1` request as the mock recorded it on arrival. */
export const RequestLogEntry = z.looseObject({
  method: z.string(),
  path: z.string(),
  query: z.record(z.string(), z.string()),
  headers: z.record(z.string(), z.string()),
  body: z.string().nullable(),
});
export type RequestLogEntry = z.output<typeof RequestLogEntry>;
