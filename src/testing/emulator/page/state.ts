// What the page knows: a copy of the mock's state, filled from GET /_mock/state and kept current by
// the events of GET /_mock/events. No DOM, no timers, no globals: the reducer changes only the state
// it is given and answers whether every message must be made again (vitest tests it as is). The
// page redraws after every burst of events, and makes again only what changed (each message's item,
// each log row, is made once) unless an event says every message may read differently.
import type { Delivery, RequestLogEntry } from '../../../schemas/mock-control.js';
import type * as Mock from '../../../schemas/mock-events.js';

/** How many deliveries and requests the page keeps. */
export const MAX_LOG = 300;

/** A conversation with its messages by id. */
export type PageConversation = Mock.MockConversation & { messages: Map<string, Mock.MockMessage> };

/** An empty copy of the mock, as the page keeps it. */
export function createState() {
  return {
    /** Mock clock minus this machine's clock, in ms. */
    offsetMs: 0,
    agents: new Map<string, Mock.MockAgent>(),
    users: new Map<string, Mock.MockUser>(),
    conversations: new Map<string, PageConversation>(),
    invites: new Map<string, Mock.MockInvite>(),
    attachments: new Map<string, Mock.MockAttachment>(),
    deliveries: [] as Delivery[],
    requests: [] as RequestLogEntry[],
    /** "conversation|actor" to who is typing where, until `expiresMs` on the mock clock (0: stopped). */
    typing: new Map<string, { conversation_id: string; actor_id: string; expiresMs: number }>(),
  };
}

/** The page's copy of the mock. */
export type PageState = ReturnType<typeof createState>;

function setNow(state: PageState, iso: string, now: number): void {
  const ms = Date.parse(iso);
  if (!Number.isNaN(ms)) state.offsetMs = ms - now;
}

function pushLog<T>(list: T[], item: T) {
  list.push(item);
  if (list.length > MAX_LOG) list.splice(0, list.length - MAX_LOG);
  return false;
}

// A name, status or expiry changed: every card and badge may read differently.
function put<T extends { id: string }>(map: Map<string, T>, item: T) {
  map.set(item.id, item);
  return true;
}

const byId = <T extends { id: string }>(items: readonly T[]) => new Map(items.map((item) => [item.id, item]));

/** Replaces everything with a snapshot; `now` is this machine's clock, in ms. */
export function applySnapshot(state: PageState, snapshot: Mock.MockStateSnapshot, now = Date.now()): void {
  setNow(state, snapshot.now, now);
  state.agents = byId(snapshot.agents);
  state.users = byId(snapshot.users);
  state.conversations = new Map(
    snapshot.conversations.map(({ messages, ...view }) => [view.id, { ...view, messages: byId(messages) }]),
  );
  state.invites = byId(snapshot.invites);
  state.attachments = byId(snapshot.attachments);
  state.deliveries = snapshot.deliveries.slice(-MAX_LOG);
  state.requests = snapshot.requests.slice(-MAX_LOG);
  state.typing = new Map();
}

type EventOf<T extends Mock.MockEventType> = Extract<Mock.MockEvent, { type: T }>;
/** Applies an event; answers whether every message must be made again. */
type Reducer<T extends Mock.MockEventType> = (state: PageState, event: EventOf<T>, now: number) => boolean;

function messageEvent(state: PageState, event: EventOf<'message.created' | 'message.updated'>) {
  state.conversations.get(event.conversation_id)?.messages.set(event.message.id, event.message);
  // A message from an agent ends its typing, as a real app shows it.
  state.typing.delete(`${event.conversation_id}|${event.message.sender.id}`);
  // A message that asks or ends a question changes how the question's earlier messages read.
  const { metadata } = event.message;
  return metadata?.question !== undefined || metadata?.question_end !== undefined;
}

// One reducer per event type of the mock's feed: the compiler checks that none is missing, and the
// page subscribes to exactly these.
const REDUCERS: { [T in Mock.MockEventType]: Reducer<T> } = {
  'message.created': messageEvent,
  'message.updated': messageEvent,
  typing: (state, event) => {
    const expiresMs = event.state === 'start' ? Date.parse(event.expires_at) : 0;
    const { conversation_id, actor_id } = event;
    state.typing.set(`${conversation_id}|${actor_id}`, { conversation_id, actor_id, expiresMs });
    return false;
  },
  'conversation.updated': (state, event) => {
    const view = event.conversation;
    const messages = state.conversations.get(view.id)?.messages ?? new Map<string, Mock.MockMessage>();
    state.conversations.set(view.id, { ...view, messages });
    return true;
  },
  'invite.updated': (state, event) => put(state.invites, event.invite),
  'agent.created': (state, event) => put(state.agents, event.agent),
  'agent.updated': (state, event) => put(state.agents, event.agent),
  'user.created': (state, event) => put(state.users, event.user),
  'user.updated': (state, event) => put(state.users, event.user),
  'attachment.updated': (state, event) => put(state.attachments, event.attachment),
  delivery: (state, event) => pushLog(state.deliveries, event.delivery),
  request: (state, event) => pushLog(state.requests, event.request),
  clock: (state, event, now) => {
    setNow(state, event.now, now);
    // Expiries and windows may have passed: every card and badge may read differently.
    return true;
  },
  // The page loads a fresh snapshot, which makes everything again.
  reset: () => true,
};

/** The event types the page follows: every type of the mock's feed. */
export const EVENT_TYPES = Object.keys(REDUCERS) as Mock.MockEventType[];

/**
 * Applies one event of the live feed and answers whether every message must be made again; `now` is
 * this machine's clock.
 */
export function applyEvent(state: PageState, event: Mock.MockEvent, now = Date.now()): boolean {
  // An event type this page does not know yet has no reducer: nothing to draw.
  const reduce = REDUCERS[event.type] as Reducer<Mock.MockEventType> | undefined;
  return reduce?.(state, event, now) ?? false;
}

/** The time on the mock clock, in ms, for this machine's `now`. */
export const mockNow = (state: PageState, now = Date.now()) => now + state.offsetMs;

/** The display name of a user or agent id. */
export const nameOf = (state: PageState, id: string) =>
  (state.users.get(id) ?? state.agents.get(id))?.display_name ?? id;

/** A conversation's title as a person reads it. */
export const titleOf = (conversation: Mock.MockConversation) =>
  conversation.title || conversation.participants.map((p) => p.display_name).join(' · ');

/** The messages of a conversation, by sequence. */
export const messagesOf = (conversation: PageConversation) =>
  [...conversation.messages.values()].sort((a, b) => a.sequence - b.sequence);

/** The active users of a conversation, who the page can post as. */
export const usersOf = (conversation: Mock.MockConversation) =>
  conversation.participants.filter((p) => p.kind === 'user' && p.active);

/** Conversations, newest first. */
export const conversationsOf = (state: PageState) =>
  [...state.conversations.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : -1));

/** A question as the page reads it from the metadata of its agent's messages (docs/bot.md). */
export interface PageQuestion {
  /** The id of the message that asked it. */
  id: string;
  /** `pending`, a `question_end` outcome (`answered`, `timed_out`, ...), or `replaced` by a newer one. */
  status: string;
  /** When it times out, on the mock's clock: `timeout_ms` after the message that asked it. */
  deadlineMs?: number;
}

/** An object, or undefined: metadata is whatever the agent sent. */
const objectOr = (value: unknown) =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;

/** The questions of a conversation, by the id of each message that asks one (the question and its re-asks). */
export function questionsOf(conversation: PageConversation): Map<string, PageQuestion> {
  const byMessage = new Map<string, PageQuestion>();
  let latest: PageQuestion | undefined;
  for (const message of messagesOf(conversation)) {
    const end = objectOr(message.metadata?.question_end);
    const ended = typeof end?.id === 'string' ? byMessage.get(end.id) : undefined;
    if (ended && typeof end?.outcome === 'string') ended.status = end.outcome;
    const asks = objectOr(message.metadata?.question);
    if (typeof asks?.name !== 'string') continue;
    if (typeof asks.id === 'string') {
      // A re-ask: its buttons answer the question it names.
      const asked = byMessage.get(asks.id);
      if (asked) byMessage.set(message.id, asked);
      continue;
    }
    // One question per conversation: a newer one replaces the one still pending.
    if (latest?.status === 'pending') latest.status = 'replaced';
    const timeout = asks.timeout_ms;
    const deadlineMs = typeof timeout === 'number' ? Date.parse(message.created_at) + timeout : undefined;
    latest = { id: message.id, status: 'pending', deadlineMs };
    byMessage.set(message.id, latest);
  }
  return byMessage;
}

/** Who is typing in a conversation at `now` (this machine's clock), by name. */
export function typingIn(state: PageState, conversationId: string, now = Date.now()): string[] {
  const at = mockNow(state, now);
  return [...state.typing.values()]
    .filter((entry) => entry.conversation_id === conversationId && entry.expiresMs > at)
    .map((entry) => nameOf(state, entry.actor_id));
}
