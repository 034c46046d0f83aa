// The shapes of the live feed and the snapshot (schemas/mock-events.ts), built from the records.
import type {
  MockAgent,
  MockAttachment,
  MockConversation,
  MockInvite,
  MockUser,
} from '../schemas/mock-events.js';
import { agentView } from './agents.js';
import { displayName } from './conversations.js';
import { inviteView } from './invites.js';
import type {
  AgentRecord,
  AttachmentRecord,
  ConversationRecord,
  InviteRecord,
  MockState,
  UserRecord,
} from './state.js';
import { iso } from './world.js';

/** An agent without its credentials. */
export function mockAgentView(agent: AgentRecord): MockAgent {
  return { ...agentView(agent), created_at: iso(agent.created_at) };
}

/** A user with its session token and installs. */
export function mockUserView(user: UserRecord): MockUser {
  return {
    id: user.id,
    display_name: user.display_name,
    verified: user.verified,
    session_token: user.session_token,
    installs: [...user.installs.keys()],
  };
}

/** A conversation of any kind, participants named, without messages. */
export function mockConversationView(state: MockState, conversation: ConversationRecord): MockConversation {
  return {
    id: conversation.id,
    kind: conversation.kind,
    title: conversation.title,
    membership_version: conversation.membership_version,
    participants: conversation.participants.map((participant) => ({
      id: participant.id,
      kind: participant.kind,
      display_name: displayName(state, participant.id),
      active: participant.active,
    })),
    created_at: iso(conversation.created_at),
  };
}

/** The Group invite with its agent and the users who accepted so far. */
export function mockInviteView(state: MockState, invite: InviteRecord): MockInvite {
  return {
    ...inviteView(state, invite),
    agent_id: invite.agent_id,
    accepted_user_ids: invite.user_ids.filter((id) => invite.accepted.has(id)),
  };
}

/** An upload handle without its URL tokens. */
export function mockAttachmentView(attachment: AttachmentRecord): MockAttachment {
  return {
    id: attachment.id,
    agent_id: attachment.agent_id,
    name: attachment.name,
    mime_type: attachment.mime_type,
    size_bytes: attachment.size_bytes,
    uploaded: attachment.bytes !== null,
  };
}
