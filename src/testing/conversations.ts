import { conversationFor } from './access.js';
import { invalid, json, MockError, notFound } from './http.js';
import { newId } from './ids.js';
import { conversationUpdated } from './live-feed.js';
import { messageView, newestFirst } from './messages.js';
import { endpoint } from './router.js';
import type { ConversationRecord, MockState, MockWorld, ParticipantRecord } from './state.js';

/** Adds a conversation with these participants, all active. */
export function createConversation(
  world: MockWorld,
  kind: ConversationRecord['kind'],
  title: string | null,
  participants: Omit<ParticipantRecord, 'active'>[],
): ConversationRecord {
  const conversation: ConversationRecord = {
    id: newId('cnv'),
    kind,
    title,
    participants: participants.map((participant) => ({ ...participant, active: true })),
    membership_version: 1,
    created_at: world.clock.now(),
    messages: [],
  };
  world.state.conversations.set(conversation.id, conversation);
  conversationUpdated(world, conversation);
  return conversation;
}

/** The display name of a user or agent id. */
export function displayName(state: MockState, id: string): string {
  return state.users.get(id)?.display_name ?? state.agents.get(id)?.display_name ?? id;
}

function counterpart(state: MockState, conversation: ConversationRecord, viewerId: string) {
  const other = conversation.participants.find((p) => p.kind === 'user' && p.id !== viewerId);
  if (!other || conversation.kind === 'group') return null;
  return { id: other.id, display_name: displayName(state, other.id), avatar_url: null };
}

function lastOf(conversation: ConversationRecord) {
  const last = conversation.messages.at(-1);
  return { last_sequence: last?.sequence ?? 0, last_message_at: last ? last.created_at.toISOString() : null };
}

/** The agent read shape of `GET /v1/conversations/{id}`. */
function agentConversationView(state: MockState, conversation: ConversationRecord, agentId: string) {
  const user = counterpart(state, conversation, agentId);
  return {
    id: conversation.id,
    title: conversation.title ?? user?.display_name ?? null,
    counterpart_user: user,
    participant_count: conversation.participants.filter((p) => p.active).length,
    ...lastOf(conversation),
    created_at: conversation.created_at.toISOString(),
  };
}

/** The direct-conversation shape, as seen by one user. */
function conversationView(state: MockState, conversation: ConversationRecord, viewerId: string) {
  const user = counterpart(state, conversation, viewerId);
  const last = conversation.messages.at(-1);
  const unread = conversation.messages.filter(
    (m) => m.sender_id !== viewerId && m.status !== 'deleted' && !m.read_at,
  );
  return {
    id: conversation.id,
    kind: conversation.kind,
    title: conversation.title ?? user?.display_name ?? null,
    avatar_url: null,
    membership_version: conversation.membership_version,
    participants: conversation.participants.map((p) => ({ ...p, display_name: displayName(state, p.id) })),
    contact_id: user?.id ?? null,
    counterpart_user: user,
    created_at: conversation.created_at.toISOString(),
    ...lastOf(conversation),
    last_message_preview:
      last && last.status !== 'deleted' ? (messageView(last).fallback_text as string) : null,
    unread: unread.length,
    messages: newestFirst(conversation, 50).map(messageView),
  };
}

/** `GET /v1/conversations/{id}`: agent token, active participants only (404 otherwise). */
export const retrieveConversation = endpoint('conversations.retrieve', {
  handle: (ctx) => {
    const { agent } = ctx.caller;
    const conversation = conversationFor(ctx.world.state, agent.id, ctx.params.conversation_id ?? '');
    return json(200, { conversation: agentConversationView(ctx.world.state, conversation, agent.id) });
  },
});

/** `POST /v1/conversations/direct`: one conversation per normalized pair; 201 created, 200 reused. */
export const createDirect = endpoint('conversations.createDirect', {
  handle: (ctx) => {
    const { state } = ctx.world;
    const me = ctx.caller.user;
    const targetId = ctx.body.user_id;
    if (targetId === me.id) throw invalid('user_id: must be another user, not yourself');
    const target = state.users.get(targetId);
    if (!target) throw notFound(`user ${targetId}`);
    if (!target.verified)
      throw new MockError(422, 'ineligible_target', `user_id: ${targetId} is not a verified user`);
    // A direct conversation has its two users as its only participants, in either order.
    const existing = [...state.conversations.values()].find(
      (c) => c.kind === 'direct' && c.participants.every((p) => p.id === me.id || p.id === targetId),
    );
    const conversation =
      existing ??
      createConversation(ctx.world, 'direct', null, [
        { id: me.id, kind: 'user' },
        { id: targetId, kind: 'user' },
      ]);
    return json(existing ? 200 : 201, { conversation: conversationView(state, conversation, me.id) });
  },
});
