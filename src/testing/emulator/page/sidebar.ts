// The left column: agents, users (create one, install an agent), conversations and group invites.
import { byId, type Child, clip, fill, h } from './dom.js';
import { conversationsOf, messagesOf, nameOf, type PageConversation, titleOf } from './state.js';
import { store } from './store.js';

/** Fills a list, or shows `empty` when there is nothing in it. */
function list<T>(id: string, items: readonly T[], empty: string, item: (value: T) => Child) {
  fill(byId(id), items.length === 0 ? h('li.empty', empty) : items.map(item));
}

const line = (name: string, badge: Child) => h('div.entity-line', h('span.entity-name', name), badge);
const badge = (kind: string | undefined, text: string | undefined) =>
  h('span.badge', { class: `badge-${kind}` }, text);

function agents() {
  const empty = 'No agent yet. Register your bot with POST /v1/agents, then set its webhook.';
  list('agents', [...store.agents.values()], empty, (agent) =>
    h(
      'li.entity',
      line(agent.display_name, badge(agent.status, agent.status === 'active' ? 'active' : 'no webhook')),
      h('div.entity-sub', `@${agent.handle}`),
      h('div.entity-sub.mono', { title: agent.webhook_url }, clip(agent.webhook_url, 44)),
    ),
  );
}

function users() {
  list('users', [...store.users.values()], 'No user yet: create one below.', (user) => {
    const installs = user.installs.map((id) => nameOf(store, id)).join(', ');
    return h(
      'li.entity',
      line(user.display_name, !user.verified && h('span.badge', 'unverified')),
      h('div.entity-sub', installs ? `Installed: ${installs}` : 'No agent installed'),
    );
  });
}

function options<T extends { id: string }>(
  id: string,
  items: readonly T[],
  label: (item: T) => string,
  none: string,
) {
  const select = byId<HTMLSelectElement>(id);
  const keep = select.value;
  const choices = items.map((item) => h('option', { value: item.id }, label(item)));
  fill(select, items.length === 0 ? h('option', { value: '' }, none) : choices);
  if (items.some((item) => item.id === keep)) select.value = keep;
  select.disabled = items.length === 0;
}

function preview(conversation: PageConversation) {
  const last = messagesOf(conversation).at(-1);
  if (!last) return 'No messages yet';
  const text = last.status === 'deleted' ? '(unsent)' : clip(last.fallback_text || '…', 60);
  return `${nameOf(store, last.sender.id)}: ${text}`;
}

function conversation(item: PageConversation, selected: string | null, select: (id: string) => void) {
  const current = item.id === selected;
  return h(
    'li',
    h(
      'button.conversation',
      {
        type: 'button',
        class: current && 'selected',
        'aria-current': current ? 'true' : undefined,
        'data-conversation-id': item.id,
        onclick: () => select(item.id),
      },
      h('span.entity-line', h('span.entity-name', titleOf(item)), badge(item.kind, item.kind)),
      h('span.entity-sub', preview(item)),
    ),
  );
}

/** Redraws the whole left column (it is small). */
export function drawSidebar(selected: string | null, select: (conversationId: string) => void) {
  agents();
  users();
  const userList = [...store.users.values()];
  const agentList = [...store.agents.values()];
  options('install-user', userList, (u) => u.display_name, 'no user');
  options('install-agent', agentList, (a) => `${a.display_name} (@${a.handle})`, 'no agent');
  byId<HTMLButtonElement>('install-submit').disabled = userList.length === 0 || agentList.length === 0;
  const empty = 'No conversation yet: install an agent for a user.';
  list('conversations', conversationsOf(store), empty, (item) => conversation(item, selected, select));
  const invites = [...store.invites.values()].reverse();
  byId('invites-section').hidden = invites.length === 0;
  fill(
    byId('invites'),
    invites.map((invite) => {
      const accepted = `${invite.accepted_user_ids.length} of ${invite.members.length} accepted`;
      return h(
        'li.entity',
        { 'data-invite-id': invite.id },
        line(invite.title, badge(invite.status, invite.status)),
        h('div.entity-sub', `from ${nameOf(store, invite.agent_id)} · ${accepted}`),
      );
    }),
  );
}
