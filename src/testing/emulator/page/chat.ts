// The conversation pane: its header (title, members, who is typing), its messages (redrawn one by one
// as they change, so a streamed reply grows in place), and the "post as" choice.
import { byId, choices, fill, h } from './dom.js';
import { messageItem } from './message.js';
import { messagesOf, type PageConversation, questionsOf, titleOf, typingIn, usersOf } from './state.js';
import { store } from './store.js';

// Each message's item, made once per message object (an update brings a new one), until the
// conversation changes or everything must redraw.
let items = new WeakMap<object, HTMLLIElement>();
let drawnId: string | null = null;

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

/** Redraws the open conversation: every message when `all`, else only those that changed. */
export function drawChat(conversationId: string | null, all: boolean) {
  const conversation = conversationId ? store.conversations.get(conversationId) : undefined;
  // Chosen before the live feed brought it: the pane keeps what it shows until it comes.
  if (conversationId && !conversation) return;
  byId('chat-empty').hidden = Boolean(conversation);
  byId('chat').hidden = !conversation;
  if (!conversation) return;
  const list = byId('messages');
  const { scrollTop } = list;
  const nearBottom = list.scrollHeight - scrollTop - list.clientHeight < 80;
  const fresh = drawnId !== conversation.id;
  drawnId = conversation.id;
  if (fresh || all) items = new WeakMap();
  header(conversation);
  drawTyping(conversation.id);
  const questions = questionsOf(conversation);
  const drawn = messagesOf(conversation).map((message) => {
    const item = items.get(message) ?? messageItem(message, questions.get(message.id));
    items.set(message, item);
    return item;
  });
  list.replaceChildren(...drawn);
  byId('messages-empty').hidden = conversation.messages.size > 0;
  // Follow the conversation as it grows, unless the person scrolled up to read.
  list.scrollTop = fresh || nearBottom ? list.scrollHeight : scrollTop;
}
