import type { ApiPromise } from '../core/api-promise.js';
import type { RequestOptions } from '../core/options.js';
import { parseInput, pathId } from '../core/validate.js';
import { InviteId } from '../schemas/common.js';
import { AcceptInviteResponse, CreateInviteRequest, CreateInviteResponse } from '../schemas/invites.js';
import { Resource } from './resource.js';

/** An agent's group proposals. */
export class Groups extends Resource {
  /**
   * Proposes a new group, or an addition to an existing one (`conversation_id`), to verified users who
   * installed the agent. Pass a key derived from the triggering event so a redelivery cannot invite twice.
   *
   * @example
   * await client.groups.invite({ title, user_ids, reason }, { idempotencyKey: idempotencyKeyFor(event.eventId, 'invite') });
   */
  invite(body: CreateInviteRequest, options?: RequestOptions): ApiPromise<CreateInviteResponse> {
    return this._request(() => ({
      method: 'POST',
      path: '/v1/groups/invites',
      body: parseInput(CreateInviteRequest, body, 'groups.invite'),
      schema: CreateInviteResponse,
      requiresIdempotencyKey: true,
      operation: 'groups.invite',
      options,
    }));
  }
}

/** A user's group invites. */
export class Invites extends Resource {
  /**
   * Accepts an invite as one of its targets; `conversation_id` is null until the last target accepts.
   *
   * @example
   * const { invite, conversation_id } = await user.invites.accept('inv_...');
   */
  accept(inviteId: string, options?: RequestOptions): ApiPromise<AcceptInviteResponse> {
    return this._request(() => ({
      method: 'POST',
      path: `/v1/groups/invites/${pathId(InviteId, inviteId, 'inviteId', 'invites.accept')}/accept`,
      schema: AcceptInviteResponse,
      // A repeated acceptance is a no-op (PROTOCOL.md section 12), so a retry is safe.
      idempotent: true,
      operation: 'invites.accept',
      options,
    }));
  }
}
