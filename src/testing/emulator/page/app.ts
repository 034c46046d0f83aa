// The emulator page: loads a snapshot, follows the live feed, redraws after each burst of events
// (making again only what changed), and turns clicks and forms into calls to /_mock and /v1.
import type { MockEvent, MockStateSnapshot } from '../../../schemas/mock-events.js';
import { bindActions, call } from './actions.js';
import { bindTabs, drawActivity } from './activity.js';
import { drawChat, drawTyping } from './chat.js';
import { byId, duration, fill, fullTime } from './dom.js';
import { drawSidebar } from './sidebar.js';
import { applyEvent, applySnapshot, conversationsOf, EVENT_TYPES, mockNow } from './state.js';
import { store } from './store.js';

/**
 * The open conversation. One the store does not hold yet (an install answers before the live feed
 * brings its conversation) is drawn once it comes; until then the pane keeps what it shows.
 */
let selected: string | null = decodeURIComponent(location.hash.slice(1)) || null;
/** Whether the next redraw makes every message again; undefined while none is scheduled. */
let redrawAll: boolean | undefined;
/** Events that arrive while a snapshot is loading wait here. */
let buffer: MessageEvent<string>[] | null = null;

function schedule(all: boolean) {
  // One redraw per burst of events: a fast stream of patches is drawn at most every 16 ms.
  if (redrawAll === undefined) setTimeout(flush, 16);
  redrawAll = redrawAll || all;
}

function flush() {
  const all = redrawAll ?? true;
  redrawAll = undefined;
  selected ??= conversationsOf(store)[0]?.id ?? null;
  drawSidebar(selected);
  drawChat(selected, all);
  drawActivity();
  drawClock();
}

function drawClock() {
  byId('clock-now').textContent = fullTime(mockNow(store));
  const ahead = Math.round(store.offsetMs / 1000);
  byId('clock-offset').textContent =
    Math.abs(ahead) >= 1 ? `${ahead > 0 ? '+' : '−'}${duration(ahead)} from real time` : 'real time';
}

function select(conversationId: string) {
  selected = conversationId;
  history.replaceState(null, '', `#${encodeURIComponent(conversationId)}`);
  schedule(true);
  setTimeout(() => byId('composer-text').focus(), 20);
}

function setConnection(state: 'live' | 'reconnecting') {
  const el = byId('connection');
  el.dataset.state = state;
  fill(el, state === 'live' ? 'Live' : 'Reconnecting…');
}

async function load() {
  buffer = [];
  const snapshot = await call<MockStateSnapshot>('/_mock/state', { method: 'GET' });
  const waiting = buffer;
  buffer = null;
  if (!snapshot) return;
  applySnapshot(store, snapshot);
  if (selected && !store.conversations.has(selected)) selected = null;
  // Events up to event_seq are already in the snapshot.
  for (const message of waiting) if (Number(message.lastEventId) > snapshot.event_seq) onEvent(message);
  schedule(true);
}

function onEvent(message: MessageEvent<string>) {
  if (buffer) return void buffer.push(message);
  const event = JSON.parse(message.data) as MockEvent;
  // After a reset the page starts again from a fresh snapshot.
  if (event.type === 'reset') void load();
  else schedule(applyEvent(store, event));
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

bindActions(select, () => (selected ? store.conversations.get(selected) : undefined));
bindTabs();
connect();
// The clock runs on, and typing ends when its time is up.
setInterval(() => {
  drawClock();
  drawTyping(selected);
}, 1000);
