// The emulator page's chat.js, served at /_mock/ui/chat.js. Browser code is kept as a string
// so it ships inside the package with no build step; it must hold no backtick and no dollar-brace.

/** The conversation pane. */
export const CHAT_JS = `// The conversation pane: its header (title, members, who is typing), its messages (redrawn one by
// one as they change, so a streamed reply grows in place), and the "post as" choice.
import { byId, fill, h } from './dom.js';
import { messageItem } from './message.js';
import { messagesOf, store, titleOf, typingIn, usersOf } from './store.js';

const drawn = { conversationId: null, items: new Map() };

/** The user the page posts as in a conversation: the one chosen, else its first user. */
export function actingUser(conversation) {
  const select = byId('composer-user');
  const users = usersOf(conversation);
  return users.find((user) => user.id === select.value) || users[0] || null;
}

function header(conversation) {
  const kind = conversation.kind;
  fill(byId('chat-title'), titleOf(conversation));
  fill(byId('chat-kind'), kind);
  byId('chat-kind').className = 'badge badge-' + kind;
  fill(byId('chat-members'), conversation.participants.filter((p) => p.active).map((p, i) =>
    [i ? ', ' : '', h('span', { class: p.kind === 'agent' ? 'member-agent' : 'member-user' }, p.display_name)],
  ));
}

/** Draws who is typing in the open conversation. */
export function drawTyping(conversationId) {
  const names = conversationId ? typingIn(conversationId) : [];
  const line = byId('typing');
  line.hidden = names.length === 0;
  fill(line, names.length ? [h('span', { class: 'dots', 'aria-hidden': 'true' }, h('i'), h('i'), h('i')), names.join(', ') + (names.length > 1 ? ' are' : ' is') + ' typing…'] : []);
}

function drawComposerUsers(conversation) {
  const select = byId('composer-user');
  const keep = select.value;
  const users = usersOf(conversation);
  fill(select, users.map((user) => h('option', { value: user.id }, user.display_name)));
  if (users.some((user) => user.id === keep)) select.value = keep;
  const disabled = users.length === 0;
  select.disabled = disabled;
  byId('composer-text').disabled = disabled;
  byId('composer-send').disabled = disabled;
}

/** Redraws the open conversation: everything when it changed, else the messages in "changed". */
export function drawChat(conversationId, changed, actions) {
  const conversation = conversationId ? store.conversations.get(conversationId) : null;
  byId('chat-empty').hidden = Boolean(conversation);
  byId('chat').hidden = !conversation;
  if (!conversation) {
    drawn.conversationId = null;
    drawn.items.clear();
    return;
  }
  const list = byId('messages');
  const nearBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 80;
  const fresh = drawn.conversationId !== conversationId;
  if (fresh) {
    drawn.conversationId = conversationId;
    drawn.items.clear();
    list.replaceChildren();
  }
  header(conversation);
  drawComposerUsers(conversation);
  drawTyping(conversationId);
  let added = false;
  let previous = null;
  for (const message of messagesOf(conversation)) {
    const old = drawn.items.get(message.id);
    if (!old || fresh || changed === 'all' || changed.has(message.id)) {
      const item = messageItem(message, actions);
      if (old) old.replaceWith(item);
      else {
        added = true;
        if (previous) previous.after(item);
        else list.prepend(item);
      }
      drawn.items.set(message.id, item);
      previous = item;
    } else {
      previous = old;
    }
  }
  const empty = conversation.messages.size === 0;
  byId('messages-empty').hidden = !empty;
  // Follow the conversation as it grows, unless the person scrolled up to read.
  if (fresh || ((added || changed !== 'all') && nearBottom)) list.scrollTop = list.scrollHeight;
}
`;
