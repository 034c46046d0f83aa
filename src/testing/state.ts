// The whole service as plain data, and the world every rule receives: the state, the clock, the
// options, and the live parts (open event streams, webhook deliveries, the live feed) that are not
// plain data. Rules are functions over these; nothing in the state does I/O.
import type * as z from 'zod/mini';
import type { RegisterAgentRequest } from '../schemas/agents.js';
import type { CreateAttachmentRequest } from '../schemas/attachments.js';
import type { SendBlock } from '../schemas/messages.js';
import type { Delivery, FaultSpec, RequestLogEntry } from '../schemas/mock-control.js';
import type { Caller } from './access.js';
import type { MockClock } from './clock.js';
import type { KeyRecord } from './idempotency.js';
import type { MockEventBus } from './live-feed.js';
import type { MockServiceOptions } from './mock-service.js';
import type { StreamHub } from './streaming.js';
import type { WebhookDispatcher } from './webhook-delivery.js';

/** A user of the service's app. */
export interface UserRecord {
  id: string;
  display_name: string;
  verified: boolean;
  session_token: string;
  /** Agents this user installed, each with their `agent`-kind conversation's id. */
  installs: Map<string, string>;
}

/** A registered agent (what it registered with) and its credentials. */
export interface AgentRecord extends z.output<typeof RegisterAgentRequest> {
  id: string;
  status: 'pending_webhook' | 'active';
  webhook_status: 'unverified' | 'verified';
  api_key: string;
  webhook_secret: string;
  created_at: Date;
}

/** A participant of a conversation. */
export interface ParticipantRecord {
  id: string;
  kind: 'user' | 'agent';
  active: boolean;
}

/** A conversation of any kind; its messages are ordered by sequence. */
export interface ConversationRecord {
  id: string;
  kind: 'direct' | 'agent' | 'group';
  title: string | null;
  participants: ParticipantRecord[];
  membership_version: number;
  created_at: Date;
  messages: MessageRecord[];
}

/** A content block as stored: the send shape with its id. */
export type BlockRecord = SendBlock & { id: string };

/** A reaction on part 0 of a message. */
interface ReactionRecord {
  part_index: number;
  emoji: string;
  actor_id: string;
}

/** A message, from a user or an agent. */
export interface MessageRecord {
  id: string;
  conversation_id: string;
  sequence: number;
  sender_id: string;
  blocks: BlockRecord[];
  fallback_text: string | null;
  status: 'sent' | 'streaming' | 'deleted';
  created_at: Date;
  reply_to: { message_id: string; part_index: number } | null;
  /** Agents the message names (PROTOCOL.md section 14); absent for none. */
  invoked_agents?: string[];
  metadata: Record<string, unknown> | null;
  delivered_at: Date | null;
  read_at: Date | null;
  reactions: ReactionRecord[];
  /** Applied appends; 0 until the first (PROTOCOL.md section 8). */
  revision: number;
  /** Clock time of the last change, for auto-completion. */
  last_change: Date;
  /** Scheduler handle of the pending auto-completion. */
  auto_complete_task?: number;
}

/** An upload handle and, once uploaded, its bytes. */
export interface AttachmentRecord extends z.output<typeof CreateAttachmentRequest> {
  id: string;
  agent_id: string;
  expires_at: Date;
  upload_token: string;
  download_token: string;
  bytes: Uint8Array | null;
}

/** A group invite and who accepted it. */
export interface InviteRecord {
  id: string;
  agent_id: string;
  title: string;
  reason: string;
  user_ids: string[];
  accepted: Set<string>;
  status: 'pending' | 'completed' | 'expired';
  created_at: Date;
  expires_at: Date;
  /** The existing group the invite adds to, or null for a new group. */
  conversation_id: string | null;
  /** The group once completed. */
  result_conversation_id: string | null;
}

/** An injected fault and how many more requests it will match. */
export interface FaultRecord {
  id: string;
  spec: FaultSpec;
  remaining: number;
}

/** Empty state: every piece of mutable state of the mock. */
export function createState(generation = 0) {
  return {
    users: new Map<string, UserRecord>(),
    agents: new Map<string, AgentRecord>(),
    /** Bearer token (agent key or user session) to its holder, so no request scans every record. */
    callers: new Map<string, Caller>(),
    conversations: new Map<string, ConversationRecord>(),
    /** Message id to message, across conversations. */
    messages: new Map<string, MessageRecord>(),
    attachments: new Map<string, AttachmentRecord>(),
    invites: new Map<string, InviteRecord>(),
    /** Keys by scope (caller, method, path), then by the key. */
    idempotency: new Map<string, Map<string, KeyRecord>>(),
    faults: [] as FaultRecord[],
    requests: [] as RequestLogEntry[],
    deliveries: [] as Delivery[],
    /** Bumped by reset(), so work begun before it cannot write into the new state. */
    generation,
  };
}

/** Every piece of mutable state of the mock. */
export type MockState = ReturnType<typeof createState>;

/** Everything a rule can touch. `state` is replaced by reset(), so read it through the world. */
export interface MockWorld {
  state: MockState;
  clock: MockClock;
  /** The options after defaults, as the rules read them. */
  options: Required<Pick<MockServiceOptions, 'fetch' | 'keepAliveMs' | 'streamedBodies'>>;
  streams: StreamHub;
  webhooks: WebhookDispatcher;
  /** The live feed; it outlives reset(), so its listeners do too. */
  events: MockEventBus;
}
