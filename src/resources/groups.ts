import type { ApiPromise } from '../core/api-promise.js';
import type { RequestOptions } from '../core/options.js';
import type { AcceptInviteResponse, CreateInviteRequest, CreateInviteResponse } from '../schemas/invites.js';
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
    return this._transport.request('groups.invite', { body, options });
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
    return this._transport.request('invites.accept', { params: { invite_id: inviteId }, options });
  }
}
