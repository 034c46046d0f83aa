import * as z from 'zod/mini';
import { Agent } from './agents.js';
import { Timestamp } from './common.js';
import { Conversation } from './conversations.js';
import { GroupInvite } from './invites.js';
import { Message } from './messages.js';
import { Delivery, RequestLogEntry } from './mock-control.js';

// ---- The mock's live feed (`mock.events`, `GET /_mock/events`) and snapshot (`GET /_mock/state`) ----
// snake_case like the rest of /_mock. Objects are loose: the emulator page and tests read them.

/** An agent as the mock holds it, without its api key or webhook secret. */
export const MockAgent = z.extend(Agent, { created_at: Timestamp });
/** An agent as the mock holds it, without its api key or webhook secret. */
export type MockAgent = z.output<typeof MockAgent>;

/** A user of the mock, with its session token (the mock is a local test tool). */
export const MockUser = z.looseObject({
  id: z.string(),
  display_name: z.string(),
  verified: z.boolean(),
  session_token: z.string(),
  /** Ids of the agents this user installed. */
  installs: z.array(z.string()),
});
/** A user of the mock, with its session token (the mock is a local test tool). */
export type MockUser = z.output<typeof MockUser>;

/** A conversation of any kind (`direct`, `agent`, `group`), without its messages. */
export const MockConversation = z.pick(Conversation, {
  id: true,
  kind: true,
  title: true,
  membership_version: true,
  participants: true,
  created_at: true,
});
/** A conversation of any kind (`direct`, `agent`, `group`), without its messages. */
export type MockConversation = z.output<typeof MockConversation>;

/** A group invite with who it is from and who accepted it so far. */
export const MockInvite = z.extend(GroupInvite, {
  agent_id: z.string(),
  accepted_user_ids: z.array(z.string()),
});
/** A group invite with who it is from and who accepted it so far. */
export type MockInvite = z.output<typeof MockInvite>;

/** An upload handle: what it holds, and whether its bytes arrived (then `/_mock/files/{id}` serves them). */
export const MockAttachment = z.looseObject({
  id: z.string(),
  agent_id: z.string(),
  name: z.string(),
  mime_type: z.string(),
  size_bytes: z.int(),
  uploaded: z.boolean(),
});
/** An upload handle: what it holds, and whether its bytes arrived (then `/_mock/files/{id}` serves them). */
export type MockAttachment = z.output<typeof MockAttachment>;

/**
 * A message as the mock's feed and snapshot show it: SPEC.md's Message plus the `metadata` its
 * agent sent, which `/v1` history does not show, so the emulator can read what the agent marked.
 */
export const MockMessage = z.extend(Message, { metadata: z.nullish(z.record(z.string(), z.unknown())) });
/** A message as the mock's feed and snapshot show it (with the agent's `metadata`). */
export type MockMessage = z.output<typeof MockMessage>;

const conversationMessage = { conversation_id: z.string(), message: MockMessage };

/** One event of the mock's live feed. */
export const MockEvent = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('message.created'), ...conversationMessage }),
  z.looseObject({ type: z.literal('message.updated'), ...conversationMessage }),
  z.looseObject({
    type: z.literal('typing'),
    conversation_id: z.string(),
    actor_id: z.string(),
    state: z.string(),
    expires_at: Timestamp,
  }),
  z.looseObject({ type: z.literal('conversation.updated'), conversation: MockConversation }),
  z.looseObject({ type: z.literal('invite.updated'), invite: MockInvite }),
  z.looseObject({ type: z.literal('agent.created'), agent: MockAgent }),
  z.looseObject({ type: z.literal('agent.updated'), agent: MockAgent }),
  z.looseObject({ type: z.literal('user.created'), user: MockUser }),
  z.looseObject({ type: z.literal('user.updated'), user: MockUser }),
  z.looseObject({ type: z.literal('attachment.updated'), attachment: MockAttachment }),
  z.looseObject({ type: z.literal('delivery'), delivery: Delivery }),
  z.looseObject({ type: z.literal('request'), request: RequestLogEntry }),
  z.looseObject({ type: z.literal('clock'), now: Timestamp }),
  z.looseObject({ type: z.literal('reset') }),
]);
/** One event of the mock's live feed. */
export type MockEvent = z.output<typeof MockEvent>;
/** The `type` of a mock event. */
export type MockEventType = MockEvent['type'];

/** `GET /_mock/state`: everything the emulator page needs for its first paint. */
export const MockStateSnapshot = z.looseObject({
  now: Timestamp,
  /** The seq of the last live-feed event this snapshot includes (the SSE `id:` of the feed). */
  event_seq: z.int(),
  /** How many streaming-send responses are open (`mock.openStreams`). */
  open_streams: z.int(),
  agents: z.array(MockAgent),
  users: z.array(MockUser),
  /** Each conversation with its messages, oldest first. */
  conversations: z.array(z.extend(MockConversation, { messages: z.array(MockMessage) })),
  invites: z.array(MockInvite),
  attachments: z.array(MockAttachment),
  deliveries: z.array(Delivery),
  /** The most recent `/v1` requests, oldest first (at most {@link SNAPSHOT_REQUESTS}). */
  requests: z.array(RequestLogEntry),
});
/** `GET /_mock/state`: everything the emulator page needs for its first paint. */
export type MockStateSnapshot = z.output<typeof MockStateSnapshot>;

/** How many of the latest requests the snapshot carries. */
export const SNAPSHOT_REQUESTS = 200;
