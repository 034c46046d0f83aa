// The emulator page's app.js, served at /_mock/ui/app.js. Browser code is kept as a string
// so it ships inside the package with no build step; it must hold no backtick and no dollar-brace.

/** The entry module: snapshot, live feed, redraws, and the page's actions. */
export const APP_JS = `// The emulator page: loads a snapshot, follows the live feed, redraws what changed, and turns
// clicks and forms into calls to /_mock and /v1.
import { drawActivity } from './activity.js';
import { api } from './api.js';
import { actingUser, drawChat, drawTyping } from './chat.js';
import { byId, duration, fill, fullTime } from './dom.js';
import { applyEvent, applySnapshot, mockNow, store } from './store.js';
import { drawSidebar } from './sidebar.js';

const EVENT_TYPES = [
  'message.created', 'message.updated', 'typing', 'conversation.updated', 'invite.updated',
  'agent.created', 'agent.updated', 'user.created', 'user.updated', 'attachment.updated',
  'delivery', 'request', 'clock', 'reset',
];

let selected = decodeURIComponent(location.hash.slice(1)) || null;
let pending = { lists: true, chat: true, messages: 'all', log: true };
let scheduled = false;
/** Events that arrive while a snapshot is loading wait here, with their seq. */
let buffer = null;

function schedule(changed) {
  pending.lists = pending.lists || changed.lists;
  pending.log = pending.log || changed.log;
  const mine = changed.conversation === selected || changed.messages === 'all';
  if (mine || changed.clock) pending.chat = true;
  if (changed.messages === 'all' || pending.messages === 'all') pending.messages = 'all';
  else if (changed.conversation === selected) for (const id of changed.messages) pending.messages.add(id);
  if (!scheduled) {
    scheduled = true;
    // One redraw per burst of events: a fast stream of patches is drawn at most every 16 ms.
    setTimeout(flush, 16);
  }
}

function redrawAll() {
  schedule({ lists: true, log: true, clock: true, messages: 'all', conversation: selected });
}

function flush() {
  scheduled = false;
  const work = pending;
  pending = { lists: false, chat: false, messages: new Set(), log: false };
  if (!selected || !store.conversations.has(selected)) {
    const newest = [...store.conversations.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : -1))[0];
    if (newest || selected) {
      selected = newest ? newest.id : null;
      work.lists = true;
      work.chat = true;
      work.messages = 'all';
    }
  }
  if (work.lists) drawSidebar(selected, actions);
  if (work.chat) drawChat(selected, work.messages, actions);
  if (work.log) drawActivity();
  drawClock();
}

function drawClock() {
  const now = mockNow();
  byId('clock-now').textContent = fullTime(now);
  const ahead = Math.round(store.offsetMs / 1000);
  byId('clock-offset').textContent = Math.abs(ahead) >= 1 ? (ahead > 0 ? '+' : '−') + duration(ahead) + ' from real time' : 'real time';
}

let toastTimer;
function toast(message, kind) {
  const el = byId('toast');
  el.textContent = message;
  el.className = 'toast ' + (kind || 'error');
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.hidden = true;
  }, 6000);
}

/** Runs an action with its button disabled; a failure shows in the toast. */
async function run(button, work) {
  if (button) button.disabled = true;
  try {
    return await work();
  } catch (error) {
    toast(error instanceof Error ? error.message : String(error));
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

/** What the drawn parts of the page can do. */
const actions = {
  select(conversationId) {
    selected = conversationId;
    history.replaceState(null, '', '#' + encodeURIComponent(conversationId));
    redrawAll();
    setTimeout(() => byId('composer-text').focus(), 20);
  },
  postback(conversationId, value) {
    const conversation = store.conversations.get(conversationId);
    const user = conversation && actingUser(conversation);
    if (!user) return toast('This conversation has no user to post as.');
    return run(null, () => api.post(conversationId, user.id, value));
  },
  accept(inviteId, userId) {
    const user = store.users.get(userId);
    if (!user) return toast('Unknown user ' + userId);
    return run(null, () => api.accept(inviteId, user.session_token));
  },
};

function bindForms() {
  byId('create-user').addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = byId('create-user-name');
    const name = input.value.trim();
    if (!name) return;
    const done = await run(event.submitter, () => api.createUser(name));
    if (done) input.value = '';
  });
  byId('install').addEventListener('submit', async (event) => {
    event.preventDefault();
    const userId = byId('install-user').value;
    const agentId = byId('install-agent').value;
    const done = await run(event.submitter, () => api.install(userId, agentId));
    if (done) actions.select(done.conversation_id);
  });
  byId('composer').addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = byId('composer-text');
    const conversation = selected && store.conversations.get(selected);
    const user = conversation && actingUser(conversation);
    const text = input.value;
    if (!user || !text.trim()) return;
    const done = await run(byId('composer-send'), () => api.post(conversation.id, user.id, text));
    if (done) input.value = '';
    input.focus();
  });
  for (const button of document.querySelectorAll('[data-advance]')) {
    button.addEventListener('click', () => run(button, () => api.advance(Number(button.dataset.advance))));
  }
  byId('advance-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const seconds = Number(byId('advance-seconds').value);
    // The mock's own cap on one advance (MAX_ADVANCE_SECONDS); it answers 400 beyond it anyway.
    if (!(seconds >= 0 && seconds <= 315576000)) return toast('Seconds: a number from 0 to 315576000 (ten years).');
    return run(event.submitter, () => api.advance(seconds));
  });
  byId('reset').addEventListener('click', () => {
    if (confirm('Empty the mock: every agent, user, conversation and log?')) run(byId('reset'), () => api.reset());
  });
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    tab.addEventListener('click', () => showTab(tab.id));
    tab.addEventListener('keydown', (event) => {
      if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
      const other = document.querySelector('[role="tab"]:not([aria-selected="true"])');
      if (other) {
        showTab(other.id);
        other.focus();
      }
    });
  }
}

function showTab(id) {
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    const on = tab.id === id;
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
    byId(tab.getAttribute('aria-controls')).hidden = !on;
  }
}

function setConnection(state) {
  const el = byId('connection');
  el.dataset.state = state;
  fill(el, state === 'live' ? 'Live' : 'Reconnecting…');
}

async function load() {
  buffer = [];
  try {
    const snapshot = await api.state();
    applySnapshot(snapshot);
    const waiting = buffer;
    buffer = null;
    // Events up to event_seq are already in the snapshot.
    for (const [event, seq] of waiting) if (seq > snapshot.event_seq) onEvent(event, seq);
    redrawAll();
  } catch (error) {
    buffer = null;
    toast('Could not load the state of the mock: ' + (error instanceof Error ? error.message : String(error)));
  }
}

function onEvent(event, seq) {
  if (buffer) return void buffer.push([event, seq]);
  if (event.type === 'reset') return void load();
  schedule(applyEvent(event));
}

function connect() {
  const source = new EventSource('/_mock/events');
  source.addEventListener('open', () => {
    setConnection('live');
    // Subscribed first, then the snapshot: nothing falls between the two.
    load();
  });
  source.addEventListener('error', () => setConnection('reconnecting'));
  for (const type of EVENT_TYPES) {
    source.addEventListener(type, (message) => onEvent(JSON.parse(message.data), Number(message.lastEventId)));
  }
}

bindForms();
showTab('tab-deliveries');
connect();
// The clock runs on, and typing ends when its time is up.
setInterval(() => {
  drawClock();
  drawTyping(selected);
}, 1000);
`;
