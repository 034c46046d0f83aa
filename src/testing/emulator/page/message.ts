// One message as the page draws it: its parts (text, quick replies, files, consent cards), its state
// (streaming, unsent), receipts and reactions. `actions` are the page's handlers.
import type { Message, MessagePart } from '../../../schemas/messages.js';
import type { MockInvite } from '../../../schemas/mock-events.js';
import { bytes, clockTime, duration, h } from './dom.js';
import { mockNow, nameOf } from './state.js';
import { store } from './store.js';

/** What a drawn message can do. */
export interface MessageActions {
  select(conversationId: string): void;
  postback(conversationId: string, value: string): void;
  accept(inviteId: string, userId: string): void;
}

/** An action of an actions block, as history holds it. */
interface QuickReply {
  actionId?: string;
  label?: string;
  behavior?: { type?: string; value?: string };
}

const CONSENT = /^accept:(inv_.+)$/;

const isAgent = (id: string) => store.agents.has(id);

function textPart(part: MessagePart, streaming: boolean) {
  const caret = streaming ? h('span', { class: 'caret', 'aria-hidden': 'true' }) : null;
  return h('p', { class: `part-text${streaming ? ' growing' : ''}` }, part.text ?? '', caret);
}

function filePart(part: MessagePart) {
  const attachment = store.attachments.get(part.attachment_id ?? '');
  const name = attachment ? attachment.name : part.attachment_id;
  const href = `/_mock/files/${encodeURIComponent(part.attachment_id ?? '')}`;
  const image = part.type === 'image' && (attachment?.uploaded ?? true);
  return h(
    'div',
    { class: 'part-file' },
    image ? h('img', { class: 'part-image', src: href, alt: name, loading: 'lazy' }) : null,
    h(
      'a',
      { class: 'file-link', href, download: name },
      h('span', { class: 'file-icon', 'aria-hidden': 'true' }, part.type === 'image' ? '🖼' : '📎'),
      h('span', { class: 'file-name' }, name),
      attachment &&
        h('span', { class: 'file-size' }, `${attachment.mime_type} · ${bytes(attachment.size_bytes)}`),
    ),
  );
}

function consentMember(invite: MockInvite, member: MockInvite['members'][number], actions: MessageActions) {
  const done = invite.accepted_user_ids.includes(member.user_id);
  return h(
    'li',
    { class: `consent-member${done ? ' accepted' : ''}` },
    h('span', { class: 'member-name' }, member.display_name),
    done
      ? h('span', { class: 'member-state' }, '✓ accepted')
      : h(
          'button',
          {
            type: 'button',
            class: 'btn btn-small btn-primary',
            disabled: invite.status !== 'pending' || !store.users.has(member.user_id),
            'data-accept-user': member.user_id,
            onclick: () => actions.accept(invite.id, member.user_id),
          },
          `Accept as ${member.display_name}`,
        ),
  );
}

function consentCard(invite: MockInvite, actions: MessageActions) {
  const left = (Date.parse(invite.expires_at) - mockNow(store)) / 1000;
  const group = invite.conversation_id ? store.conversations.get(invite.conversation_id) : undefined;
  const foot = (text: string) => h('p', { class: 'consent-foot' }, text);
  return h(
    'div',
    { class: 'consent', 'data-invite-id': invite.id, 'data-invite-status': invite.status },
    h(
      'div',
      { class: 'consent-head' },
      h('span', { class: 'consent-kind' }, 'Group invite'),
      h('span', { class: `badge badge-${invite.status}` }, invite.status),
    ),
    h(
      'ul',
      { class: 'consent-members' },
      invite.members.map((member) => consentMember(invite, member, actions)),
    ),
    invite.status === 'pending' &&
      foot(`Expires in ${duration(Math.max(left, 0))} (at ${clockTime(invite.expires_at)})`),
    invite.status === 'expired' && foot('Expired before everyone accepted.'),
    invite.status === 'completed' &&
      group &&
      h(
        'button',
        { type: 'button', class: 'btn btn-small', onclick: () => actions.select(group.id) },
        `Open group “${group.title || invite.title}”`,
      ),
  );
}

function actionsPart(part: MessagePart, message: Message, actions: MessageActions) {
  const list = (part.actions ?? []) as QuickReply[];
  const consent = list.length === 1 && CONSENT.exec(list[0]?.behavior?.value ?? '');
  const invite = consent && store.invites.get(consent[1] ?? '');
  if (invite) return consentCard(invite, actions);
  const button = (action: QuickReply) => {
    const value = action.behavior?.value;
    return h(
      'button',
      {
        type: 'button',
        class: 'btn btn-chip',
        title: value ? `Posts “${value}”` : undefined,
        disabled: !value,
        'data-postback': value,
        onclick: () => value && actions.postback(message.conversation_id, value),
      },
      action.label || value || '?',
    );
  };
  return h('div', { class: 'quick-replies', role: 'group', 'aria-label': 'Quick replies' }, list.map(button));
}

function partOf(part: MessagePart, message: Message, actions: MessageActions, lastText: number) {
  switch (part.type) {
    case 'text':
      return textPart(part, message.status === 'streaming' && part.part_index === lastText);
    case 'actions':
      return actionsPart(part, message, actions);
    case 'file':
    case 'image':
      return filePart(part);
    default:
      return h('p', { class: 'part-unknown' }, `A “${part.type}” part this page does not draw.`);
  }
}

function receipt(message: Message) {
  if (isAgent(message.sender.id) || message.status === 'deleted') return null;
  if (message.read_at) {
    return h('span', { class: 'receipt read', title: `Read at ${clockTime(message.read_at)}` }, '✓✓ Read');
  }
  if (message.delivered_at) {
    const title = `Delivered at ${clockTime(message.delivered_at)}`;
    return h('span', { class: 'receipt', title }, '✓ Delivered');
  }
  return h('span', { class: 'receipt pending' }, 'Sent');
}

function reactions(message: Message) {
  const list = message.reactions ?? [];
  if (list.length === 0) return null;
  return h(
    'ul',
    { class: 'reactions', 'aria-label': 'Reactions' },
    list.map((reaction) => {
      const who = nameOf(store, reaction.actor_id);
      return h(
        'li',
        { class: 'reaction', title: who },
        reaction.emoji,
        h('span', { class: 'reaction-who' }, who),
      );
    }),
  );
}

/** The list item of one message. */
export function messageItem(message: Message, actions: MessageActions): HTMLLIElement {
  const deleted = message.status === 'deleted';
  const streaming = message.status === 'streaming';
  const parts = message.parts ?? [];
  const textParts = parts.filter((part) => part.type === 'text');
  const lastText = textParts.at(-1)?.part_index ?? -1;
  const fallback = message.fallback_text;
  const joined = textParts.map((part) => part.text ?? '').join('\n');
  const showFallback = Boolean(!deleted && fallback && fallback !== joined);
  const from = isAgent(message.sender.id) ? 'from-agent' : 'from-user';
  return h(
    'li',
    {
      class: `msg ${from}${deleted ? ' deleted' : ''}${streaming ? ' streaming' : ''}`,
      'data-message-id': message.id,
      'data-status': message.status,
      'data-sender': message.sender.id,
    },
    h('div', { class: 'msg-sender' }, nameOf(store, message.sender.id)),
    h(
      'div',
      { class: 'bubble' },
      deleted
        ? h('p', { class: 'tombstone' }, 'This message was unsent.')
        : parts.map((part) => partOf(part, message, actions, lastText)),
    ),
    showFallback &&
      h('p', { class: 'fallback' }, h('span', { class: 'fallback-label' }, 'Fallback text'), fallback),
    reactions(message),
    h(
      'div',
      { class: 'msg-meta' },
      h('span', { title: message.created_at }, clockTime(message.created_at)),
      h('span', { class: 'seq' }, `#${message.sequence}`),
      streaming && h('span', { class: 'badge badge-streaming' }, 'streaming'),
      typeof message.revision === 'number' &&
        message.revision > 0 &&
        h('span', { class: 'revision' }, `rev ${message.revision}`),
      receipt(message),
    ),
  );
}
