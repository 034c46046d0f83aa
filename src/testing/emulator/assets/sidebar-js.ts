// The emulator page's sidebar.js, served at /_mock/ui/sidebar.js. Browser code is kept as a string
// so it ships inside the package with no build step; it must hold no backtick and no dollar-brace.

/** The left column: agents, users, conversations, invites. */
export const SIDEBAR_JS = `// The left column: agents, users (create one, install an agent), conversations and group invites.
import { byId, clip, fill, h } from './dom.js';
import { messagesOf, nameOf, store, titleOf } from './store.js';

function agents() {
  const list = [...store.agents.values()];
  fill(byId('agents'), list.length === 0
    ? h('li', { class: 'empty' }, 'No agent yet. Register your bot with POST /v1/agents, then set its webhook.')
    : list.map((agent) => h('li', { class: 'entity' },
        h('div', { class: 'entity-line' },
          h('span', { class: 'entity-name' }, agent.display_name),
          h('span', { class: 'badge badge-' + agent.status }, agent.status === 'active' ? 'active' : 'no webhook'),
        ),
        h('div', { class: 'entity-sub' }, '@' + agent.handle),
        h('div', { class: 'entity-sub mono', title: agent.webhook_url }, clip(agent.webhook_url, 44)),
      )));
}

function users() {
  const list = [...store.users.values()];
  fill(byId('users'), list.length === 0
    ? h('li', { class: 'empty' }, 'No user yet: create one below.')
    : list.map((user) => h('li', { class: 'entity' },
        h('div', { class: 'entity-line' },
          h('span', { class: 'entity-name' }, user.display_name),
          user.verified ? null : h('span', { class: 'badge' }, 'unverified'),
        ),
        h('div', { class: 'entity-sub' }, user.installs.length
          ? 'Installed: ' + user.installs.map(nameOf).join(', ')
          : 'No agent installed'),
      )));
}

function options(select, items, label, placeholder) {
  const keep = select.value;
  fill(select, items.length === 0 ? h('option', { value: '' }, placeholder) : items.map((item) => h('option', { value: item.id }, label(item))));
  if (items.some((item) => item.id === keep)) select.value = keep;
  select.disabled = items.length === 0;
}

function installForm() {
  const userList = [...store.users.values()];
  const agentList = [...store.agents.values()];
  options(byId('install-user'), userList, (u) => u.display_name, 'no user');
  options(byId('install-agent'), agentList, (a) => a.display_name + ' (@' + a.handle + ')', 'no agent');
  byId('install-submit').disabled = userList.length === 0 || agentList.length === 0;
}

function preview(conversation) {
  const messages = messagesOf(conversation);
  const last = messages[messages.length - 1];
  if (!last) return 'No messages yet';
  if (last.status === 'deleted') return nameOf(last.sender.id) + ': (unsent)';
  return nameOf(last.sender.id) + ': ' + clip(last.fallback_text || '…', 60);
}

function conversations(selected, actions) {
  const list = [...store.conversations.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
  fill(byId('conversations'), list.length === 0
    ? h('li', { class: 'empty' }, 'No conversation yet: install an agent for a user.')
    : list.map((conversation) => h('li', {},
        h('button', {
          type: 'button',
          class: 'conversation' + (conversation.id === selected ? ' selected' : ''),
          'aria-current': conversation.id === selected ? 'true' : undefined,
          'data-conversation-id': conversation.id,
          onclick: () => actions.select(conversation.id),
        },
          h('span', { class: 'entity-line' },
            h('span', { class: 'entity-name' }, titleOf(conversation)),
            h('span', { class: 'badge badge-' + conversation.kind }, conversation.kind),
          ),
          h('span', { class: 'entity-sub' }, preview(conversation)),
        ),
      )));
}

function invites() {
  const list = [...store.invites.values()].reverse();
  byId('invites-section').hidden = list.length === 0;
  fill(byId('invites'), list.map((invite) => h('li', { class: 'entity', 'data-invite-id': invite.id },
    h('div', { class: 'entity-line' },
      h('span', { class: 'entity-name' }, invite.title),
      h('span', { class: 'badge badge-' + invite.status }, invite.status),
    ),
    h('div', { class: 'entity-sub' }, 'from ' + nameOf(invite.agent_id) + ' · ' + invite.accepted_user_ids.length + ' of ' + invite.members.length + ' accepted'),
  )));
}

/** Redraws the whole left column (it is small). */
export function drawSidebar(selected, actions) {
  agents();
  users();
  installForm();
  conversations(selected, actions);
  invites();
}
`;
