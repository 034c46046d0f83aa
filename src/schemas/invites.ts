import * as z from 'zod';
import { ConversationId, nonBlank, openEnum, Timestamp, UserId } from './common.js';

export const INVITE_TTL = { min: 600, max: 604_800, default: 86_400 } as const;

/** `POST /v1/groups/invites` request. */
export const CreateInviteRequest = z.strictObject({
  title: nonBlank(1, 100),
  user_ids: z
    .array(UserId)
    .min(1)
    .max(24)
    .refine((ids) => new Set(ids).size === ids.length, { error: 'must not repeat a user id' }),
  reason: nonBlank(1, 200),
  conversation_id: ConversationId.optional(),
  ttl_seconds: z.int().min(1).optional(),
});
export type CreateInviteRequest = z.input<typeof CreateInviteRequest>;

export const InviteMember = z.looseObject({
  user_id: z.string(),
  display_name: z.string(),
  avatar_url: z.string().nullish(),
});

/** The group invite. `status` is an extension the SDK does not require. */
export const GroupInvite = z.looseObject({
  id: z.string(),
  title: z.string(),
  expires_at: Timestamp,
  created_at: Timestamp,
  members: z.array(InviteMember),
  reason: z.string(),
  conversation_id: z.string().nullish(),
  status: openEnum(['pending', 'completed', 'expired']).optional(),
});
export type GroupInvite = z.output<typeof GroupInvite>;

export const CreateInviteResponse = z.looseObject({ invite: GroupInvite });
export type CreateInviteResponse = z.output<typeof CreateInviteResponse>;

/** `POST /v1/groups/invites/{id}/accept` response; `conversation_id` is null until completed. */
export const AcceptInviteResponse = z.looseObject({
  invite: GroupInvite,
  conversation_id: z.string().nullable(),
});
export type AcceptInviteResponse = z.output<typeof AcceptInviteResponse>;
