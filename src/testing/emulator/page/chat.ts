// The conversation pane: its header (title, members, who is typing), its messages (redrawn one by one
// as they change, so a streamed reply grows in place), and the "post as" choice.
import { byId, choices, fill, h } from './dom.js';
import { type MessageActions, messageItem } from './message.js';
import { messagesOf, type PageConversation, questionsOf, titleOf, typingIn, usersOf } from './state.js';
import { store } from './store.js';

const drawn = { conversationId: null as string | null, items: new Map<string, HTMLLIElement>() };

/** The user the page posts as in a conversation: the one chosen, else its first user. */
export function actingUser(conversation: PageConversation) {
  const chosen = byId<HTMLSelectElement>('composer-user').value;
  const users = usersOf(conversation);
  return users.find((user) => user.id === chosen) ?? users[0] ?? null;
}

function header(conversation: PageConversation) {
  const { kind, participants } = conversation;
  fill(byId('chat-title'), titleOf(conversation));
  fill(byId('chat-kind'), kind).className = `badge badge-${kind}`;
  const member = (p: (typeof participants)[number], i: number) => [
    i ? ', ' : '',
    h('span', { class: p.kind === 'agent' ? 'member-agent' : 'member-user' }, p.display_name),
  ];
  fill(byId('chat-members'), participants.filter((p) => p.active).map(member));
  // The composer posts as one of the conversation's users.
  const users = usersOf(conversation);
  choices('composer-user', users, (user) => user.display_name, 'no user');
  byId<HTMLInputElement>('composer-text').disabled = users.length === 0;
  byId<HTMLButtonElement>('composer-send').disabled = users.length === 0;
}

/** Draws who is typing in the open conversation. */
export function drawTyping(conversationId: string | null) {
  const names = conversationId ? typingIn(store, conversationId) : [];
  const line = byId('typing');
  line.hidden = names.length === 0;
  const text = `${names.join(', ')}${names.length > 1 ? ' are' : ' is'} typing…`;
  fill(line, names.length > 0 && [h('span.dots', { 'aria-hidden': 'true' }, h('i'), h('i'), h('i')), text]);
}

/** Redraws the open conversation: everything when it changed, else the messages in `changed`. */
export function drawChat(
  conversationId: string | null,
  changed: Set<string> | 'all',
  actions: MessageActions,
) {
  const conversation = conversationId ? store.conversations.get(conversationId) : undefined;
  byId('chat-empty').hidden = Boolean(conversation);
  byId('chat').hidden = !conversation;
  if (!conversation) {
    drawn.conversationId = null;
    drawn.items.clear();
    return;
  }
  const list = byId('messages');
  const nearBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 80;
  const fresh = drawn.conversationId !== conversation.id;
  if (fresh) {
    drawn.conversationId = conversation.id;
    drawn.items.clear();
    list.replaceChildren();
  }
  header(conversation);
  drawTyping(conversation.id);
  let added = false;
  let previous: HTMLLIElement | null = null;
  const questions = questionsOf(conversation);
  for (const message of messagesOf(conversation)) {
    const old = drawn.items.get(message.id);
    if (old && !fresh && changed !== 'all' && !changed.has(message.id)) {
      previous = old;
      continue;
    }
    const item = messageItem(message, actions, questions.get(message.id));
    if (old) old.replaceWith(item);
    else if (previous) previous.after(item);
    else list.prepend(item);
    added ||= !old;
    drawn.items.set(message.id, item);
    previous = item;
  }
  byId('messages-empty').hidden = conversation.messages.size > 0;
  // Follow the conversation as it grows, unless the person scrolled up to read.
  if (fresh || ((added || changed !== 'all') && nearBottom)) list.scrollTop = list.scrollHeight;
}
