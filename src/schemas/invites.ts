import * as z from 'zod/mini';
import { ConversationId, nonBlank, openEnum, Timestamp, UserId, type Wire } from './common.js';

/** The lifetime of an invite in seconds: the service clamps `ttl_seconds` to min..max. */
export const INVITE_TTL = { min: 600, max: 604_800, default: 86_400 } as const;

/** `POST /v1/groups/invites` request. */
export const CreateInviteRequest = z.strictObject({
  title: nonBlank(1, 100),
  user_ids: z.array(UserId).check(
    z.minLength(1),
    z.maxLength(24),
    z.refine((ids) => new Set(ids).size === ids.length, { error: 'must not repeat a user id' }),
  ),
  reason: nonBlank(1, 200),
  conversation_id: z.optional(ConversationId),
  ttl_seconds: z.optional(z.int().check(z.minimum(1))),
});
/** `POST /v1/groups/invites` request. */
export type CreateInviteRequest = z.input<typeof CreateInviteRequest>;

/** A member of an invite. */
export const InviteMember = z.looseObject({
  user_id: z.string(),
  display_name: z.string(),
  avatar_url: z.nullish(z.string()),
});

/** The group invite. `status` is an extension the SDK does not require. */
export const GroupInvite = z.looseObject({
  id: z.string(),
  title: z.string(),
  expires_at: Timestamp,
  created_at: Timestamp,
  members: z.array(InviteMember),
  reason: z.string(),
  conversation_id: z.nullish(z.string()),
  status: z.optional(openEnum(['pending', 'completed', 'expired'])),
});
/** The group invite. */
export type GroupInvite = Wire<typeof GroupInvite>;

/** `POST /v1/groups/invites` response. */
export const CreateInviteResponse = z.looseObject({ invite: GroupInvite });
/** `POST /v1/groups/invites` response. */
export type CreateInviteResponse = Wire<typeof CreateInviteResponse>;

/** `POST /v1/groups/invites/{id}/accept` response; `conversation_id` is null until completed. */
export const AcceptInviteResponse = z.looseObject({
  invite: GroupInvite,
  conversation_id: z.nullable(z.string()),
});
/** `POST /v1/groups/invites/{id}/accept` response; `conversation_id` is null until completed. */
export type AcceptInviteResponse = Wire<typeof AcceptInviteResponse>;
