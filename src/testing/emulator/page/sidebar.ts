// The left column: agents, users (create one, install an agent), conversations and group invites.
import { byId, type Child, choices, clip, fill, h } from './dom.js';
import { conversationsOf, messagesOf, nameOf, type PageConversation, titleOf } from './state.js';
import { store } from './store.js';

/** Fills a list, or shows `empty` when there is nothing in it. */
function list<T>(id: string, items: readonly T[], empty: string, item: (value: T) => Child) {
  fill(byId(id), items.length === 0 ? h('li.empty', empty) : items.map(item));
}

const badge = (kind: string | undefined, text: string | undefined) =>
  h('span.badge', { class: `badge-${kind}` }, text);

/** An agent, user or invite card: its name and badge on one line, then a line per detail. */
const entity = (attrs: Record<string, string>, name: string, mark: Child, ...lines: Child[]) =>
  h('li.entity', attrs, h('div.entity-line', h('span.entity-name', name), mark), lines);

function preview(conversation: PageConversation) {
  const last = messagesOf(conversation).at(-1);
  if (!last) return 'No messages yet';
  const text = last.status === 'deleted' ? '(unsent)' : clip(last.fallback_text || '…', 60);
  return `${nameOf(store, last.sender.id)}: ${text}`;
}

function conversation(item: PageConversation, selected: string | null) {
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
      },
      h('span.entity-line', h('span.entity-name', titleOf(item)), badge(item.kind, item.kind)),
      h('span.entity-sub', preview(item)),
    ),
  );
}

/** Redraws the whole left column (it is small). */
export function drawSidebar(selected: string | null) {
  const agents = [...store.agents.values()];
  const users = [...store.users.values()];
  const noAgent = 'No agent yet. Register your bot with POST /v1/agents, then set its webhook.';
  list('agents', agents, noAgent, (agent) =>
    entity(
      {},
      agent.display_name,
      badge(agent.status, agent.status === 'active' ? 'active' : 'no webhook'),
      h('div.entity-sub', `@${agent.handle}`),
      h('div.entity-sub.mono', { title: agent.webhook_url }, clip(agent.webhook_url, 44)),
    ),
  );
  list('users', users, 'No user yet: create one below.', (user) => {
    const installs = user.installs.map((id) => nameOf(store, id)).join(', ');
    const sub = installs ? `Installed: ${installs}` : 'No agent installed';
    return entity(
      {},
      user.display_name,
      !user.verified && h('span.badge', 'unverified'),
      h('div.entity-sub', sub),
    );
  });
  choices('install-user', users, (u) => u.display_name, 'no user');
  choices('install-agent', agents, (a) => `${a.display_name} (@${a.handle})`, 'no agent');
  byId<HTMLButtonElement>('install-submit').disabled = users.length === 0 || agents.length === 0;
  const noConversation = 'No conversation yet: install an agent for a user.';
  list('conversations', conversationsOf(store), noConversation, (item) => conversation(item, selected));
  const invites = [...store.invites.values()].reverse();
  byId('invites-section').hidden = invites.length === 0;
  list('invites', invites, '', (invite) => {
    const accepted = `${invite.accepted_user_ids.length} of ${invite.members.length} accepted`;
    const from = `from ${nameOf(store, invite.agent_id)} · ${accepted}`;
    return entity(
      { 'data-invite-id': invite.id },
      invite.title,
      badge(invite.status, invite.status),
      h('div.entity-sub', from),
    );
  });
}
