// Group invites (PROTOCOL.md section 12): consent cards, acceptance by every target, atomic
// completion, and expiry on the clock. There is no decline.
import { InviteId } from '../schemas/common.js';
import { INVITE_TTL } from '../schemas/invites.js';
import { conversationFor, requireActive } from './access.js';
import { checkJson } from './body.js';
import { createConversation, displayName } from './conversations.js';
import { forbidden, invalid, json, MockError, notFound } from './http.js';
import { newId } from './ids.js';
import { conversationUpdated, inviteUpdated } from './live-feed.js';
import { createMessage } from './messages.js';
import { endpoint } from './router.js';
import type { InviteRecord, MockState, MockWorld } from './state.js';

/** The Group invite of SPEC.md, with the `status` extension. */
export function inviteView(state: MockState, invite: InviteRecord) {
  const conversationId = invite.conversation_id ?? invite.result_conversation_id;
  return {
    id: invite.id,
    title: invite.title,
    expires_at: invite.expires_at.toISOString(),
    created_at: invite.created_at.toISOString(),
    members: invite.user_ids.map((id) => ({
      user_id: id,
      display_name: displayName(state, id),
      avatar_url: null,
    })),
    reason: invite.reason,
    ...(conversationId ? { conversation_id: conversationId } : {}),
    status: invite.status,
  };
}

/** `POST /v1/groups/invites`: checks every target, places one consent card per target. */
export const createInvite = endpoint('groups.invite', {
  handle: (ctx) => {
    const { world } = ctx;
    const { state } = world;
    const { agent } = ctx.caller;
    const { title, user_ids, reason, conversation_id, ttl_seconds } = ctx.body;
    const group = conversation_id ? conversationFor(state, agent.id, conversation_id) : undefined;
    if (group && group.kind !== 'group') throw notFound(`group ${conversation_id}`);
    requireActive(agent);
    const members = user_ids.filter((id) => group?.participants.some((p) => p.id === id && p.active));
    if (members.length > 0) throw invalid(`user_ids: already in the group: ${members.join(', ')}`);
    const ineligible = user_ids.filter((id) => {
      const user = state.users.get(id);
      return !user?.verified || !user.installs.has(agent.id);
    });
    if (ineligible.length > 0) {
      throw new MockError(
        422,
        'ineligible_target',
        `user_ids: not verified users who installed this agent: ${ineligible.join(', ')}`,
      );
    }
    const ttl = Math.min(Math.max(ttl_seconds ?? INVITE_TTL.default, INVITE_TTL.min), INVITE_TTL.max);
    const now = world.clock.now();
    const invite: InviteRecord = {
      id: newId('inv'),
      agent_id: agent.id,
      title,
      reason,
      user_ids: [...user_ids],
      accepted: new Set(),
      status: 'pending',
      created_at: now,
      expires_at: new Date(now.getTime() + ttl * 1000),
      conversation_id: group?.id ?? null,
      result_conversation_id: null,
    };
    state.invites.set(invite.id, invite);
    // The invite first, so a consent card's reader already knows what it accepts.
    inviteUpdated(world, invite);
    for (const userId of user_ids) placeConsentCard(world, invite, userId);
    world.clock.schedule(invite.expires_at.getTime(), () => expire(world, invite));
    return json(201, { invite: inviteView(state, invite) });
  },
});

function placeConsentCard(world: MockWorld, invite: InviteRecord, userId: string): void {
  const installed = world.state.users.get(userId)?.installs.get(invite.agent_id);
  const conversation = installed === undefined ? undefined : world.state.conversations.get(installed);
  if (!conversation) return;
  createMessage(world, conversation, {
    sender_id: invite.agent_id,
    status: 'sent',
    blocks: [
      { id: newId('blk'), type: 'text', text: `${invite.title}\n\n${invite.reason}` },
      {
        id: newId('blk'),
        type: 'actions',
        layout: 'quick_replies',
        actions: [
          {
            actionId: 'accept',
            label: 'Accept',
            behavior: { type: 'postback', value: `accept:${invite.id}` },
          },
        ],
      },
    ],
  });
}

function expire(world: MockWorld, invite: InviteRecord): void {
  if (invite.status !== 'pending' || world.clock.nowMs() < invite.expires_at.getTime()) return;
  invite.status = 'expired';
  inviteUpdated(world, invite);
  world.webhooks.send(invite.agent_id, 'invite.expired', { invite: inviteView(world.state, invite) });
}

/** `POST /v1/groups/invites/{id}/accept`: the last acceptance completes the invite atomically. */
export const acceptInvite = endpoint('invites.accept', {
  handle: (ctx) => {
    const { world } = ctx;
    const { user } = ctx.caller;
    const inviteId = checkJson(InviteId, ctx.params.invite_id ?? '', 'invite_id');
    const invite = world.state.invites.get(inviteId);
    if (!invite) throw notFound(`invite ${inviteId}`);
    if (!invite.user_ids.includes(user.id))
      throw forbidden(`user ${user.id} is not a target of invite ${invite.id}`);
    expire(world, invite);
    if (invite.status === 'expired')
      throw new MockError(
        410,
        'invite_expired',
        `invite ${invite.id} expired at ${invite.expires_at.toISOString()}`,
      );
    if (invite.status === 'pending' && !invite.accepted.has(user.id)) {
      invite.accepted.add(user.id);
      if (invite.accepted.size === invite.user_ids.length) complete(world, invite);
      else inviteUpdated(world, invite);
    }
    return json(200, {
      invite: inviteView(world.state, invite),
      conversation_id: invite.result_conversation_id,
    });
  },
});

/** Creates the group (or adds every target to it) and tells the agent, all in one step. */
function complete(world: MockWorld, invite: InviteRecord): void {
  const existing = invite.conversation_id ? world.state.conversations.get(invite.conversation_id) : undefined;
  if (existing) {
    for (const id of invite.user_ids) {
      const participant = existing.participants.find((p) => p.id === id);
      if (participant) participant.active = true;
      else existing.participants.push({ id, kind: 'user', active: true });
    }
    existing.membership_version += 1;
    conversationUpdated(world, existing);
  }
  const group =
    existing ??
    createConversation(world, 'group', invite.title, [
      ...invite.user_ids.map((id) => ({ id, kind: 'user' as const })),
      { id: invite.agent_id, kind: 'agent' },
    ]);
  invite.status = 'completed';
  invite.result_conversation_id = group.id;
  inviteUpdated(world, invite);
  world.webhooks.send(invite.agent_id, 'invite.completed', {
    invite: inviteView(world.state, invite),
    conversationId: group.id,
  });
}
