// The emulator page's message.js, served at /_mock/ui/message.js. Browser code is kept as a string
// so it ships inside the package with no build step; it must hold no backtick and no dollar-brace.

/** One message: parts, quick replies, files, consent cards, receipts, reactions. */
export const MESSAGE_JS = String.raw`// One message as the page draws it: its parts (text, quick replies, files, consent cards), its
// state (streaming, unsent), receipts and reactions. "actions" are the page's handlers.
import { bytes, clockTime, duration, h } from './dom.js';
import { isAgent, mockNow, nameOf, store } from './store.js';

const CONSENT = /^accept:(inv_.+)$/;

function textPart(part, streaming) {
  return h('p', { class: 'part-text' + (streaming ? ' growing' : '') }, part.text || '', streaming ? h('span', { class: 'caret', 'aria-hidden': 'true' }) : null);
}

function filePart(part) {
  const attachment = store.attachments.get(part.attachment_id);
  const name = attachment ? attachment.name : part.attachment_id;
  const href = '/_mock/files/' + encodeURIComponent(part.attachment_id || '');
  const uploaded = attachment ? attachment.uploaded : true;
  const image = part.type === 'image' && uploaded ? h('img', { class: 'part-image', src: href, alt: name, loading: 'lazy' }) : null;
  return h('div', { class: 'part-file' },
    image,
    h('a', { class: 'file-link', href, download: name },
      h('span', { class: 'file-icon', 'aria-hidden': 'true' }, part.type === 'image' ? '🖼' : '📎'),
      h('span', { class: 'file-name' }, name),
      attachment ? h('span', { class: 'file-size' }, attachment.mime_type + ' · ' + bytes(attachment.size_bytes)) : null,
    ),
  );
}

function consentCard(invite, actions) {
  const pending = invite.status === 'pending';
  const accepted = new Set(invite.accepted_user_ids);
  const left = (Date.parse(invite.expires_at) - mockNow()) / 1000;
  const group = invite.conversation_id ? store.conversations.get(invite.conversation_id) : null;
  return h('div', { class: 'consent', 'data-invite-id': invite.id, 'data-invite-status': invite.status },
    h('div', { class: 'consent-head' },
      h('span', { class: 'consent-kind' }, 'Group invite'),
      h('span', { class: 'badge badge-' + invite.status }, invite.status),
    ),
    h('ul', { class: 'consent-members' }, invite.members.map((member) => {
      const user = store.users.get(member.user_id);
      const done = accepted.has(member.user_id);
      return h('li', { class: 'consent-member' + (done ? ' accepted' : '') },
        h('span', { class: 'member-name' }, member.display_name),
        done
          ? h('span', { class: 'member-state' }, '✓ accepted')
          : h('button', {
              type: 'button',
              class: 'btn btn-small btn-primary',
              disabled: !pending || !user,
              'data-accept-user': member.user_id,
              onclick: () => actions.accept(invite.id, member.user_id),
            }, 'Accept as ' + member.display_name),
      );
    })),
    pending ? h('p', { class: 'consent-foot' }, 'Expires in ' + duration(Math.max(left, 0)) + ' (at ' + clockTime(invite.expires_at) + ')') : null,
    invite.status === 'expired' ? h('p', { class: 'consent-foot' }, 'Expired before everyone accepted.') : null,
    invite.status === 'completed' && group
      ? h('button', { type: 'button', class: 'btn btn-small', onclick: () => actions.select(group.id) }, 'Open group “' + (group.title || invite.title) + '”')
      : null,
  );
}

function actionsPart(part, message, actions) {
  const list = part.actions || [];
  const consent = list.length === 1 && list[0].behavior && CONSENT.exec(list[0].behavior.value || '');
  const invite = consent && store.invites.get(consent[1]);
  if (invite) return consentCard(invite, actions);
  return h('div', { class: 'quick-replies', role: 'group', 'aria-label': 'Quick replies' },
    list.map((action) => {
      const value = action.behavior && action.behavior.value;
      return h('button', {
        type: 'button',
        class: 'btn btn-chip',
        title: value ? 'Posts “' + value + '”' : undefined,
        disabled: !value,
        'data-postback': value,
        onclick: () => actions.postback(message.conversation_id, value),
      }, action.label || value || '?');
    }),
  );
}

function partOf(part, message, actions, lastText) {
  switch (part.type) {
    case 'text':
      return textPart(part, message.status === 'streaming' && part.part_index === lastText);
    case 'actions':
      return actionsPart(part, message, actions);
    case 'file':
    case 'image':
      return filePart(part);
    default:
      return h('p', { class: 'part-unknown' }, 'A “' + part.type + '” part this page does not draw.');
  }
}

function receipt(message) {
  if (isAgent(message.sender.id) || message.status === 'deleted') return null;
  if (message.read_at) return h('span', { class: 'receipt read', title: 'Read at ' + clockTime(message.read_at) }, '✓✓ Read');
  if (message.delivered_at) return h('span', { class: 'receipt', title: 'Delivered at ' + clockTime(message.delivered_at) }, '✓ Delivered');
  return h('span', { class: 'receipt pending' }, 'Sent');
}

function reactions(message) {
  const list = message.reactions || [];
  if (list.length === 0) return null;
  return h('ul', { class: 'reactions', 'aria-label': 'Reactions' }, list.map((reaction) =>
    h('li', { class: 'reaction', title: nameOf(reaction.actor_id) }, reaction.emoji, h('span', { class: 'reaction-who' }, nameOf(reaction.actor_id))),
  ));
}

function joinedText(parts) {
  return parts.filter((part) => part.type === 'text').map((part) => part.text || '').join('\n');
}

/** The list item of one message. */
export function messageItem(message, actions) {
  const fromAgent = isAgent(message.sender.id);
  const deleted = message.status === 'deleted';
  const parts = message.parts || [];
  const textParts = parts.filter((part) => part.type === 'text');
  const lastText = textParts.length ? textParts[textParts.length - 1].part_index : -1;
  const fallback = message.fallback_text;
  const showFallback = !deleted && fallback && fallback !== joinedText(parts);
  return h('li', {
    class: 'msg ' + (fromAgent ? 'from-agent' : 'from-user') + (deleted ? ' deleted' : '') + (message.status === 'streaming' ? ' streaming' : ''),
    'data-message-id': message.id,
    'data-status': message.status,
    'data-sender': message.sender.id,
  },
    h('div', { class: 'msg-sender' }, nameOf(message.sender.id)),
    h('div', { class: 'bubble' },
      deleted
        ? h('p', { class: 'tombstone' }, 'This message was unsent.')
        : parts.map((part) => partOf(part, message, actions, lastText)),
    ),
    showFallback ? h('p', { class: 'fallback' }, h('span', { class: 'fallback-label' }, 'Fallback text'), fallback) : null,
    reactions(message),
    h('div', { class: 'msg-meta' },
      h('span', { title: message.created_at }, clockTime(message.created_at)),
      h('span', { class: 'seq' }, '#' + message.sequence),
      message.status === 'streaming' ? h('span', { class: 'badge badge-streaming' }, 'streaming') : null,
      typeof message.revision === 'number' && message.revision > 0 ? h('span', { class: 'revision' }, 'rev ' + message.revision) : null,
      receipt(message),
    ),
  );
}
`;
