// GET /_mock/state: the whole state at one moment, for the emulator page's first paint; the live
// feed (GET /_mock/events) carries every change after it.
import { type MockStateSnapshot, SNAPSHOT_REQUESTS } from '../schemas/mock-events.js';
import {
  mockAgentView,
  mockAttachmentView,
  mockConversationView,
  mockInviteView,
  mockUserView,
} from './live-views.js';
import { messageView } from './message-view.js';
import { snapshotRequests } from './request-log.js';
import { iso, type MockWorld } from './world.js';

/** Agents (no secrets), users (with session tokens), conversations with messages, and the logs. */
export function takeSnapshot(world: MockWorld): MockStateSnapshot {
  const { state } = world;
  return {
    now: iso(world.clock.now()),
    event_seq: world.events.seq,
    open_streams: world.streams.openCount,
    agents: [...state.agents.values()].map(mockAgentView),
    users: [...state.users.values()].map(mockUserView),
    conversations: [...state.conversations.values()].map((conversation) => ({
      ...mockConversationView(state, conversation),
      messages: conversation.messages.map(messageView),
    })),
    invites: [...state.invites.values()].map((invite) => mockInviteView(state, invite)),
    attachments: [...state.attachments.values()].map(mockAttachmentView),
    deliveries: state.deliveries.map((delivery) => ({ ...delivery })),
    requests: snapshotRequests(state).slice(-SNAPSHOT_REQUESTS),
  };
}
