// The emulator page's store.js, served at /_mock/ui/store.js. Browser code is kept as a string
// so it ships inside the package with no build step; it must hold no backtick and no dollar-brace.

/** The page's copy of the mock, kept current by the live feed. */
export const STORE_JS = `// What the page knows: a copy of the mock's state, filled from GET /_mock/state and kept current
// by the events of GET /_mock/events. applyEvent answers what changed, so only that is redrawn.

const MAX_LOG = 300;

/** The page's copy of the mock. */
export const store = {
  /** Mock clock minus this machine's clock, in ms. */
  offsetMs: 0,
  agents: new Map(),
  users: new Map(),
  /** Conversation id to conversation, each with "messages": a Map of message id to message. */
  conversations: new Map(),
  invites: new Map(),
  attachments: new Map(),
  deliveries: [],
  requests: [],
  /** "conversation|actor" to "{ conversation_id, actor_id, expiresMs }". */
  typing: new Map(),
};

/** The time on the mock clock, in ms. */
export function mockNow() {
  return Date.now() + store.offsetMs;
}

function setNow(iso) {
  const ms = Date.parse(iso);
  if (!Number.isNaN(ms)) store.offsetMs = ms - Date.now();
}

function putConversation(view) {
  const existing = store.conversations.get(view.id);
  store.conversations.set(view.id, { ...view, messages: existing ? existing.messages : new Map() });
}

function putMessage(conversationId, message) {
  const conversation = store.conversations.get(conversationId);
  if (conversation) conversation.messages.set(message.id, message);
}

function pushLog(list, item) {
  list.push(item);
  if (list.length > MAX_LOG) list.splice(0, list.length - MAX_LOG);
}

/** Replaces everything with a snapshot. */
export function applySnapshot(snapshot) {
  setNow(snapshot.now);
  store.agents = new Map(snapshot.agents.map((agent) => [agent.id, agent]));
  store.users = new Map(snapshot.users.map((user) => [user.id, user]));
  store.conversations = new Map();
  for (const conversation of snapshot.conversations) {
    const { messages, ...view } = conversation;
    putConversation(view);
    for (const message of messages) putMessage(view.id, message);
  }
  store.invites = new Map(snapshot.invites.map((invite) => [invite.id, invite]));
  store.attachments = new Map(snapshot.attachments.map((attachment) => [attachment.id, attachment]));
  store.deliveries = snapshot.deliveries.slice(-MAX_LOG);
  store.requests = snapshot.requests.slice(-MAX_LOG);
  store.typing = new Map();
}

/**
 * Applies one event of the live feed. Answers what to redraw: "{ lists, messages, log, clock }",
 * where "messages" is a Set of message ids, or 'all' when every message may look different.
 */
export function applyEvent(event) {
  const changed = { lists: false, messages: new Set(), conversation: null, log: false, clock: false };
  switch (event.type) {
    case 'message.created':
    case 'message.updated':
      putMessage(event.conversation_id, event.message);
      changed.conversation = event.conversation_id;
      changed.messages.add(event.message.id);
      // The conversation list shows the last message.
      changed.lists = true;
      // A message from an agent ends its typing, as a real app shows it.
      store.typing.delete(event.conversation_id + '|' + event.message.sender.id);
      break;
    case 'typing':
      store.typing.set(event.conversation_id + '|' + event.actor_id, {
        conversation_id: event.conversation_id,
        actor_id: event.actor_id,
        expiresMs: event.state === 'start' ? Date.parse(event.expires_at) : 0,
      });
      changed.conversation = event.conversation_id;
      break;
    case 'conversation.updated':
      putConversation(event.conversation);
      changed.lists = true;
      changed.conversation = event.conversation.id;
      changed.messages = 'all';
      break;
    case 'invite.updated':
      store.invites.set(event.invite.id, event.invite);
      changed.lists = true;
      changed.messages = 'all';
      break;
    case 'agent.created':
    case 'agent.updated':
      store.agents.set(event.agent.id, event.agent);
      changed.lists = true;
      changed.messages = 'all';
      break;
    case 'user.created':
    case 'user.updated':
      store.users.set(event.user.id, event.user);
      changed.lists = true;
      changed.messages = 'all';
      break;
    case 'attachment.updated':
      store.attachments.set(event.attachment.id, event.attachment);
      changed.messages = 'all';
      break;
    case 'delivery':
      pushLog(store.deliveries, event.delivery);
      changed.log = true;
      break;
    case 'request':
      pushLog(store.requests, event.request);
      changed.log = true;
      break;
    case 'clock':
      setNow(event.now);
      changed.clock = true;
      // Expiries and windows may have passed: every card and badge may read differently.
      changed.messages = 'all';
      changed.lists = true;
      break;
    default:
      // An event type this page does not know yet: nothing to draw.
      break;
  }
  return changed;
}

/** The display name of a user or agent id. */
export function nameOf(id) {
  const who = store.users.get(id) || store.agents.get(id);
  return who ? who.display_name : id;
}

/** True when the id is an agent's. */
export function isAgent(id) {
  return store.agents.has(id);
}

/** A conversation's title as a person reads it. */
export function titleOf(conversation) {
  if (conversation.title) return conversation.title;
  return conversation.participants.map((p) => p.display_name).join(' · ');
}

/** The messages of a conversation, by sequence. */
export function messagesOf(conversation) {
  return [...conversation.messages.values()].sort((a, b) => a.sequence - b.sequence);
}

/** The active users of a conversation, who the page can post as. */
export function usersOf(conversation) {
  return conversation.participants.filter((p) => p.kind === 'user' && p.active);
}

/** Who is typing in a conversation now, by mock clock. */
export function typingIn(conversationId) {
  const now = mockNow();
  const names = [];
  for (const entry of store.typing.values()) {
    if (entry.conversation_id === conversationId && entry.expiresMs > now) names.push(nameOf(entry.actor_id));
  }
  return names;
}

/** The earliest typing expiry still ahead, so the page knows when to redraw. */
export function nextTypingExpiry() {
  const now = mockNow();
  let next = Infinity;
  for (const entry of store.typing.values()) if (entry.expiresMs > now) next = Math.min(next, entry.expiresMs);
  return next;
}
`;
