// The left column: agents, users (create one, install an agent), conversations and group invites.
import { byId, type Child, clip, fill, h } from './dom.js';
import { conversationsOf, messagesOf, nameOf, type PageConversation, titleOf } from './state.js';
import { store } from './store.js';

/** Fills a list, or shows `empty` when there is nothing in it. */
function list<T>(id: string, items: readonly T[], empty: string, item: (value: T) => Child) {
  fill(byId(id), items.length === 0 ? h('li', { class: 'empty' }, empty) : items.map(item));
}

const entityLine = (name: string, badge: Child) =>
  h('div', { class: 'entity-line' }, h('span', { class: 'entity-name' }, name), badge);

function agents() {
  list(
    'agents',
    [...store.agents.values()],
    'No agent yet. Register your bot with POST /v1/agents, then set its webhook.',
    (agent) =>
      h(
        'li',
        { class: 'entity' },
        entityLine(
          agent.display_name,
          h(
            'span',
            { class: `badge badge-${agent.status}` },
            agent.status === 'active' ? 'active' : 'no webhook',
          ),
        ),
        h('div', { class: 'entity-sub' }, `@${agent.handle}`),
        h('div', { class: 'entity-sub mono', title: agent.webhook_url }, clip(agent.webhook_url, 44)),
      ),
  );
}

function users() {
  list('users', [...store.users.values()], 'No user yet: create one below.', (user) =>
    h(
      'li',
      { class: 'entity' },
      entityLine(user.display_name, !user.verified && h('span', { class: 'badge' }, 'unverified')),
      h(
        'div',
        { class: 'entity-sub' },
        user.installs.length
          ? `Installed: ${user.installs.map((id) => nameOf(store, id)).join(', ')}`
          : 'No agent installed',
      ),
    ),
  );
}

function options<T extends { id: string }>(id: string, items: T[], label: (item: T) => string, none: string) {
  const select = byId<HTMLSelectElement>(id);
  const keep = select.value;
  const choices = items.map((item) => h('option', { value: item.id }, label(item)));
  fill(select, items.length === 0 ? h('option', { value: '' }, none) : choices);
  if (items.some((item) => item.id === keep)) select.value = keep;
  select.disabled = items.length === 0;
}

function installForm() {
  const userList = [...store.users.values()];
  const agentList = [...store.agents.values()];
  options('install-user', userList, (u) => u.display_name, 'no user');
  options('install-agent', agentList, (a) => `${a.display_name} (@${a.handle})`, 'no agent');
  byId<HTMLButtonElement>('install-submit').disabled = userList.length === 0 || agentList.length === 0;
}

function preview(conversation: PageConversation) {
  const last = messagesOf(conversation).at(-1);
  if (!last) return 'No messages yet';
  const who = nameOf(store, last.sender.id);
  return last.status === 'deleted' ? `${who}: (unsent)` : `${who}: ${clip(last.fallback_text || '…', 60)}`;
}

function conversations(selected: string | null, select: (conversationId: string) => void) {
  list(
    'conversations',
    conversationsOf(store),
    'No conversation yet: install an agent for a user.',
    (conversation) => {
      const current = conversation.id === selected;
      const button = h(
        'button',
        {
          type: 'button',
          class: `conversation${current ? ' selected' : ''}`,
          'aria-current': current ? 'true' : undefined,
          'data-conversation-id': conversation.id,
          onclick: () => select(conversation.id),
        },
        h(
          'span',
          { class: 'entity-line' },
          h('span', { class: 'entity-name' }, titleOf(conversation)),
          h('span', { class: `badge badge-${conversation.kind}` }, conversation.kind),
        ),
        h('span', { class: 'entity-sub' }, preview(conversation)),
      );
      return h('li', {}, button);
    },
  );
}

function invites() {
  const all = [...store.invites.values()].reverse();
  byId('invites-section').hidden = all.length === 0;
  fill(
    byId('invites'),
    all.map((invite) =>
      h(
        'li',
        { class: 'entity', 'data-invite-id': invite.id },
        entityLine(invite.title, h('span', { class: `badge badge-${invite.status}` }, invite.status)),
        h(
          'div',
          { class: 'entity-sub' },
          `from ${nameOf(store, invite.agent_id)} · ${invite.accepted_user_ids.length} of ${invite.members.length} accepted`,
        ),
      ),
    ),
  );
}

/** Redraws the whole left column (it is small). */
export function drawSidebar(selected: string | null, select: (conversationId: string) => void) {
  agents();
  users();
  installForm();
  conversations(selected, select);
  invites();
}
