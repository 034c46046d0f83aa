// What the rules call when they change state: each function puts one event on the live feed
// (event-bus.ts). Views are built only when someone listens, so the mock pays nothing otherwise.
import type { Delivery, RequestLogEntry } from '../schemas/mock-control.js';
import {
  mockAgentView,
  mockAttachmentView,
  mockConversationView,
  mockInviteView,
  mockUserView,
} from './live-views.js';
import { messageView } from './message-view.js';
import type {
  AgentRecord,
  AttachmentRecord,
  ConversationRecord,
  InviteRecord,
  MessageRecord,
  UserRecord,
} from './state.js';
import { iso, type MockWorld } from './world.js';

/** A message was created (user post, agent send, streamed start, consent card). */
export function messageCreated(world: MockWorld, message: MessageRecord): void {
  world.events.emit(() => ({
    type: 'message.created',
    conversation_id: message.conversation_id,
    message: messageView(message),
  }));
}

/** A message changed (patch, completion, unsend, reaction, receipt, read): the whole message. */
export function messageUpdated(world: MockWorld, message: MessageRecord): void {
  world.events.emit(() => ({
    type: 'message.updated',
    conversation_id: message.conversation_id,
    message: messageView(message),
  }));
}

/** An agent started or stopped typing. */
export function typingChanged(
  world: MockWorld,
  fields: { conversation_id: string; actor_id: string; state: string; expires_at: string },
): void {
  world.events.emit(() => ({ type: 'typing', ...fields }));
}

/** A conversation was created or its members changed. */
export function conversationUpdated(world: MockWorld, conversation: ConversationRecord): void {
  world.events.emit(() => ({
    type: 'conversation.updated',
    conversation: mockConversationView(world.state, conversation),
  }));
}

/** An invite was created, accepted by one more user, completed or expired. */
export function inviteUpdated(world: MockWorld, invite: InviteRecord): void {
  world.events.emit(() => ({ type: 'invite.updated', invite: mockInviteView(world.state, invite) }));
}

/** An agent was registered (`created`) or its webhook verified (`updated`). */
export function agentChanged(world: MockWorld, agent: AgentRecord, how: 'created' | 'updated'): void {
  world.events.emit(() => ({ type: `agent.${how}`, agent: mockAgentView(agent) }));
}

/** A user was created (`created`) or installed an agent (`updated`). */
export function userChanged(world: MockWorld, user: UserRecord, how: 'created' | 'updated'): void {
  world.events.emit(() => ({ type: `user.${how}`, user: mockUserView(user) }));
}

/** An upload handle was created or its bytes arrived. */
export function attachmentUpdated(world: MockWorld, attachment: AttachmentRecord): void {
  world.events.emit(() => ({ type: 'attachment.updated', attachment: mockAttachmentView(attachment) }));
}

/** A webhook attempt was answered (or failed). */
export function deliveryMade(world: MockWorld, delivery: Delivery): void {
  world.events.emit(() => ({ type: 'delivery', delivery: { ...delivery } }));
}

/** A `/v1` request arrived (as the request log records it). */
export function requestLogged(world: MockWorld, entry: RequestLogEntry): void {
  world.events.emit(() => ({
    type: 'request',
    request: { ...entry, query: { ...entry.query }, headers: { ...entry.headers } },
  }));
}

/** The clock was advanced. */
export function clockAdvanced(world: MockWorld): void {
  world.events.emit(() => ({ type: 'clock', now: iso(world.clock.now()) }));
}

/** All state was emptied. */
export function stateReset(world: MockWorld): void {
  world.events.emit(() => ({ type: 'reset' }));
}
