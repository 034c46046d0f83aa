// The emulator page: loads a snapshot, follows the live feed, redraws after each burst of events
// (making again only what changed), and turns clicks and forms into calls to /_mock and /v1.
import { drawActivity } from './activity.js';
import { api } from './api.js';
import { actingUser, drawChat, drawTyping } from './chat.js';
import { byId, duration, fill, fullTime } from './dom.js';
import { bindForms, messageOf, run, toast } from './forms.js';
import type { MessageActions } from './message.js';
import { drawSidebar } from './sidebar.js';
import { applyEvent, applySnapshot, conversationsOf, EVENT_TYPES, mockNow } from './state.js';
import { store } from './store.js';
import { bindTabs } from './tabs.js';

let selected: string | null = decodeURIComponent(location.hash.slice(1)) || null;
/** Whether the next redraw makes every message again; undefined while none is scheduled. */
let redrawAll: boolean | undefined;
/** A conversation chosen before the live feed brought it: an install answers before its event. */
let awaited: string | null = null;
/** Events that arrive while a snapshot is loading wait here, with their seq. */
let buffer: [event: MessageEvent<string>, seq: number][] | null = null;

function schedule(all: boolean) {
  // One redraw per burst of events: a fast stream of patches is drawn at most every 16 ms.
  if (redrawAll === undefined) setTimeout(flush, 16);
  redrawAll = redrawAll || all;
}

function flush() {
  let all = redrawAll ?? true;
  redrawAll = undefined;
  let chat = true;
  if (selected && selected === awaited) {
    // Draw it once it is here; until then the pane keeps what it shows.
    if (store.conversations.has(selected)) awaited = null;
    else chat = false;
  } else if (!selected || !store.conversations.has(selected)) {
    selected = conversationsOf(store)[0]?.id ?? null;
    all = true;
  }
  drawSidebar(selected, actions.select);
  if (chat) drawChat(selected, all, actions);
  drawActivity();
  drawClock();
}

function drawClock() {
  byId('clock-now').textContent = fullTime(mockNow(store));
  const ahead = Math.round(store.offsetMs / 1000);
  byId('clock-offset').textContent =
    Math.abs(ahead) >= 1 ? `${ahead > 0 ? '+' : '−'}${duration(ahead)} from real time` : 'real time';
}

/** What the drawn parts of the page can do. */
const actions: MessageActions = {
  select(conversationId) {
    selected = conversationId;
    awaited = store.conversations.has(conversationId) ? null : conversationId;
    history.replaceState(null, '', `#${encodeURIComponent(conversationId)}`);
    schedule(true);
    setTimeout(() => byId('composer-text').focus(), 20);
  },
  click(conversationId, messageId, actionId) {
    const conversation = store.conversations.get(conversationId);
    const user = conversation && actingUser(conversation);
    if (!user) return toast('This conversation has no user to post as.');
    void run(null, () => api.click(conversationId, user.id, messageId, actionId));
  },
  accept(inviteId, userId) {
    const user = store.users.get(userId);
    if (!user) return toast(`Unknown user ${userId}`);
    void run(null, () => api.accept(inviteId, user.session_token));
  },
};

function setConnection(state: 'live' | 'reconnecting') {
  const el = byId('connection');
  el.dataset.state = state;
  fill(el, state === 'live' ? 'Live' : 'Reconnecting…');
}

async function load() {
  buffer = [];
  awaited = null;
  try {
    const snapshot = await api.state();
    applySnapshot(store, snapshot);
    const waiting = buffer;
    buffer = null;
    // Events up to event_seq are already in the snapshot.
    for (const [message, seq] of waiting) if (seq > snapshot.event_seq) onEvent(message);
    schedule(true);
  } catch (error) {
    buffer = null;
    toast(`Could not load the state of the mock: ${messageOf(error)}`);
  }
}

function onEvent(message: MessageEvent<string>) {
  const seq = Number(message.lastEventId);
  if (buffer) return void buffer.push([message, seq]);
  const changed = applyEvent(store, JSON.parse(message.data));
  if (changed.reload) void load();
  else schedule(changed.all);
}

function connect() {
  const source = new EventSource('/_mock/events');
  source.addEventListener('open', () => {
    setConnection('live');
    // Subscribed first, then the snapshot: nothing falls between the two.
    void load();
  });
  source.addEventListener('error', () => setConnection('reconnecting'));
  for (const type of EVENT_TYPES) source.addEventListener(type, onEvent);
}

bindForms(actions.select, () => (selected ? store.conversations.get(selected) : undefined));
bindTabs();
connect();
// The clock runs on, and typing ends when its time is up.
setInterval(() => {
  drawClock();
  drawTyping(selected);
}, 1000);
