// The mock's live feed: every change of state as it happens, to whoever listens (the emulator page
// through GET /_mock/events, a test in-process), and GET /_mock/state, the whole state at one moment
// for the page's first paint. The bus lives on the world, not in the state, so listeners stay
// subscribed across reset(); events and their views are built only when someone listens.
import {
  type MockAgent,
  type MockAttachment,
  type MockConversation,
  type MockEvent,
  type MockInvite,
  type MockMessage,
  type MockStateSnapshot,
  type MockUser,
  SNAPSHOT_REQUESTS,
} from '../schemas/mock-events.js';
import { agentView } from './agents.js';
import { fileResponse } from './attachments.js';
import { displayName } from './conversations.js';
import { json } from './http.js';
import { inviteView } from './invites.js';
import { messageView } from './messages.js';
import { snapshotRequests } from './request-log.js';
import { control } from './router.js';
import type {
  AgentRecord,
  AttachmentRecord,
  ConversationRecord,
  InviteRecord,
  MessageRecord,
  MockState,
  MockWorld,
  UserRecord,
} from './state.js';
import { eventStreamResponse, SseWriter } from './streaming.js';

/**
 * A listener of the live feed. `seq` numbers the events of the mock's life (1, 2, 3, ...);
 * `GET /_mock/state` answers the last one as `event_seq`, so a reader that subscribed before taking
 * a snapshot can drop the events the snapshot already holds.
 */
export type MockEventListener = (event: MockEvent, seq: number) => void;

/** The live feed: subscribe to every change of the mock's state. */
export interface MockEvents {
  /** Calls `listener` with every event from now on; answers a function that unsubscribes. */
  subscribe(listener: MockEventListener): () => void;
  /** How many listeners are subscribed now, open `GET /_mock/events` connections included. */
  readonly listenerCount: number;
}

/** Fans events out to listeners; events are built only when someone listens. */
export class MockEventBus implements MockEvents {
  readonly #listeners = new Set<MockEventListener>();
  #seq = 0;

  /** The number of the last event emitted (counted even when nobody listened). */
  get seq(): number {
    return this.#seq;
  }

  get listenerCount(): number {
    return this.#listeners.size;
  }

  subscribe(listener: MockEventListener): () => void {
    // A wrapper per subscription, so the same function subscribed twice is two subscriptions.
    const entry: MockEventListener = (event, seq) => listener(event, seq);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /** Sends the event built by `build` to every listener; `build` runs only when someone listens. */
  emit(build: () => MockEvent): void {
    this.#seq += 1;
    if (this.#listeners.size === 0) return;
    const seq = this.#seq;
    const event = build();
    for (const listener of [...this.#listeners]) {
      try {
        listener(event, seq);
      } catch (error) {
        // A listener's bug must not fail the request that caused the event: report it on its own.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

/** An agent without its credentials. */
function mockAgentView(agent: AgentRecord): MockAgent {
  return { ...agentView(agent), created_at: agent.created_at.toISOString() };
}

/** A user with its session token and installs. */
function mockUserView(user: UserRecord): MockUser {
  return { ...user, installs: [...user.installs.keys()] };
}

/** A conversation of any kind, participants named, without messages. */
function mockConversationView(
  state: MockState,
  { messages, ...conversation }: ConversationRecord,
): MockConversation {
  return {
    ...conversation,
    participants: conversation.participants.map((p) => ({ ...p, display_name: displayName(state, p.id) })),
    created_at: conversation.created_at.toISOString(),
  };
}

/** The Group invite with its agent and the users who accepted so far. */
function mockInviteView(state: MockState, invite: InviteRecord): MockInvite {
  return {
    ...inviteView(state, invite),
    agent_id: invite.agent_id,
    accepted_user_ids: invite.user_ids.filter((id) => invite.accepted.has(id)),
  };
}

/** An upload handle without its URL tokens, its expiry or its bytes (only whether they arrived). */
function mockAttachmentView(attachment: AttachmentRecord): MockAttachment {
  const { upload_token, download_token, expires_at, bytes, ...shown } = attachment;
  return { ...shown, uploaded: bytes !== null };
}

/** A message as the feed and snapshot show it: its /v1 view and the metadata its agent sent (none once unsent). */
const mockMessageView = (message: MessageRecord): MockMessage => ({
  ...messageView(message),
  metadata: message.status === 'deleted' ? null : message.metadata,
});

/** A message was created (user post, agent send, streamed start, consent card) or changed (patch,
 * completion, unsend, reaction, receipt, read): the whole message. */
export function messageChanged(world: MockWorld, message: MessageRecord, how: 'created' | 'updated'): void {
  world.events.emit(() => ({
    type: `message.${how}`,
    conversation_id: message.conversation_id,
    message: mockMessageView(message),
  }));
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

/** Agents (no secrets), users (with session tokens), conversations with messages, and the logs. */
export function takeSnapshot(world: MockWorld): MockStateSnapshot {
  const { state } = world;
  return {
    now: world.clock.now().toISOString(),
    event_seq: world.events.seq,
    open_streams: world.streams.openCount,
    agents: [...state.agents.values()].map(mockAgentView),
    users: [...state.users.values()].map(mockUserView),
    conversations: [...state.conversations.values()].map((conversation) => ({
      ...mockConversationView(state, conversation),
      messages: conversation.messages.map(mockMessageView),
    })),
    invites: [...state.invites.values()].map((invite) => mockInviteView(state, invite)),
    attachments: [...state.attachments.values()].map(mockAttachmentView),
    deliveries: state.deliveries.map((delivery) => ({ ...delivery })),
    requests: snapshotRequests(state).slice(-SNAPSHOT_REQUESTS),
  };
}

/**
 * A response that follows the live feed until the client goes away (or the server closes); each
 * frame's `id:` is the event's seq (compare with the snapshot's `event_seq`).
 */
function liveFeedResponse(world: MockWorld, signal: AbortSignal | undefined): Response {
  const feed = new SseWriter({ keepAliveMs: world.options.keepAliveMs, signal, onStop: () => unsubscribe() });
  // Subscribed before the first byte, so nothing that happens after connection is missed.
  const unsubscribe = world.events.subscribe((event, seq) => feed.event(event.type, event, seq));
  feed.write(': connected\n\n');
  return eventStreamResponse(feed.body);
}

/** `GET /_mock/events`, `GET /_mock/state`, `GET /_mock/files/{attachment_id}`. */
export const liveRoutes = [
  control('GET', '/_mock/events', (ctx) => liveFeedResponse(ctx.world, ctx.request.signal)),
  control('GET', '/_mock/state', (ctx) => json(200, takeSnapshot(ctx.world))),
  control('GET', '/_mock/files/:attachment_id', (ctx) => {
    const id = ctx.params.attachment_id ?? '';
    return fileResponse(id, ctx.world.state.attachments.get(id));
  }),
];
