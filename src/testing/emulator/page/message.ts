// One message as the page draws it: its parts (text, quick replies, files, consent cards), its state
// (streaming, unsent), receipts and reactions. Its buttons say what they do in data attributes, which
// app.ts reads on a click.
import type { Action, MessagePart } from '../../../schemas/messages.js';
import type { MockMessage as Message, MockInvite } from '../../../schemas/mock-events.js';
import { bytes, clockTime, duration, h } from './dom.js';
import { mockNow, nameOf, type PageQuestion } from './state.js';
import { store } from './store.js';

/** An action of an actions block, as history holds it: any field may be missing. */
type QuickReply = Partial<Action>;

const CONSENT = /^accept:(inv_.+)$/;

const isAgent = (id: string) => store.agents.has(id);

function filePart(part: MessagePart) {
  const attachment = store.attachments.get(part.attachment_id ?? '');
  const name = attachment ? attachment.name : part.attachment_id;
  const href = `/_mock/files/${encodeURIComponent(part.attachment_id ?? '')}`;
  const image = part.type === 'image' && (attachment?.uploaded ?? true);
  const size = attachment && `${attachment.mime_type} · ${bytes(attachment.size_bytes)}`;
  return h(
    'div.part-file',
    image && h('img.part-image', { src: href, alt: name, loading: 'lazy' }),
    h(
      'a.file-link',
      { href, download: name },
      h('span.file-icon', { 'aria-hidden': 'true' }, part.type === 'image' ? '🖼' : '📎'),
      h('span.file-name', name),
      size && h('span.file-size', size),
    ),
  );
}

function consentCard(invite: MockInvite) {
  const { status, expires_at } = invite;
  const group = store.conversations.get(invite.conversation_id ?? '');
  const member = ({ user_id, display_name }: MockInvite['members'][number]) => {
    const done = invite.accepted_user_ids.includes(user_id);
    const disabled = status !== 'pending' || !store.users.has(user_id);
    const accept = { type: 'button', disabled, 'data-accept-user': user_id };
    const state = done
      ? h('span.member-state', '✓ accepted')
      : h('button.btn.btn-small.btn-primary', accept, `Accept as ${display_name}`);
    return h('li.consent-member', { class: done && 'accepted' }, h('span.member-name', display_name), state);
  };
  const left = Math.max((Date.parse(expires_at) - mockNow(store)) / 1000, 0);
  const note =
    status === 'pending'
      ? `Expires in ${duration(left)} (at ${clockTime(expires_at)})`
      : status === 'expired' && 'Expired before everyone accepted.';
  const open = group && { type: 'button', 'data-conversation-id': group.id };
  return h(
    'div.consent',
    { 'data-invite-id': invite.id, 'data-invite-status': status },
    h(
      'div.consent-head',
      h('span.consent-kind', 'Group invite'),
      h('span.badge', { class: `badge-${status}` }, status),
    ),
    h('ul.consent-members', invite.members.map(member)),
    note && h('p.consent-foot', note),
    status === 'completed' &&
      open &&
      h('button.btn.btn-small', open, `Open group “${group.title || invite.title}”`),
  );
}

/** How a question's end reads. */
const ENDED: Record<string, string> = {
  answered: 'answered',
  timed_out: 'timed out',
  gave_up: 'given up after bad answers',
  cancelled: 'cancelled',
  replaced: 'replaced by a newer question',
};

/** The line under a question: pending (until when), or how it ended. */
function questionLine({ status, deadlineMs }: PageQuestion) {
  if (status !== 'pending') return h('div.question', h('span.badge.badge-ended', ENDED[status] ?? status));
  const at = clockTime(deadlineMs);
  const left = ((deadlineMs ?? 0) - mockNow(store)) / 1000;
  const when = !at
    ? 'no timeout'
    : left > 0
      ? `times out at ${at} (in ${duration(left)})`
      : `past its deadline at ${at}: the bot's timeout ends it`;
  return h('div.question', h('span.badge.badge-pending', 'waiting for an answer'), h('span', when));
}

function actionsPart(part: MessagePart, closed: boolean) {
  const list = (part.actions ?? []) as QuickReply[];
  const consent = list.length === 1 && CONSENT.exec(list[0]?.behavior?.value ?? '');
  const invite = consent && store.invites.get(consent[1] ?? '');
  if (invite) return consentCard(invite);
  const button = ({ actionId, label, behavior }: QuickReply) => {
    const postback = behavior?.type === 'postback' && actionId ? behavior.value : undefined;
    return h(
      'button.btn.btn-chip',
      {
        type: 'button',
        title: postback && `Sends the postback “${postback}”`,
        // A question's buttons answer it only while it waits.
        disabled: !postback || closed,
        'data-action-id': actionId,
        'data-postback': postback,
      },
      label || behavior?.value || '?',
    );
  };
  return h('div.quick-replies', { role: 'group', 'aria-label': 'Quick replies' }, list.map(button));
}

function partOf(part: MessagePart, message: Message, lastText: number, closed: boolean) {
  switch (part.type) {
    case 'text': {
      const streaming = message.status === 'streaming' && part.part_index === lastText;
      const caret = streaming && h('span.caret', { 'aria-hidden': 'true' });
      return h('p.part-text', { class: streaming && 'growing' }, part.text ?? '', caret);
    }
    case 'actions':
      return actionsPart(part, closed);
    case 'file':
    case 'image':
      return filePart(part);
    default:
      return h('p.part-unknown', `A “${part.type}” part this page does not draw.`);
  }
}

function receipt({ sender, status, read_at, delivered_at }: Message) {
  if (isAgent(sender.id) || status === 'deleted') return null;
  if (read_at) return h('span.receipt.read', { title: `Read at ${clockTime(read_at)}` }, '✓✓ Read');
  if (delivered_at)
    return h('span.receipt', { title: `Delivered at ${clockTime(delivered_at)}` }, '✓ Delivered');
  return h('span.receipt.pending', 'Sent');
}

function reactions(message: Message) {
  const list = message.reactions ?? [];
  const item = ({ actor_id, emoji }: (typeof list)[number]) => {
    const who = nameOf(store, actor_id);
    return h('li.reaction', { title: who }, emoji, h('span.reaction-who', who));
  };
  return list.length > 0 && h('ul.reactions', { 'aria-label': 'Reactions' }, list.map(item));
}

/** The list item of one message; `question` when it asks one (or asks it again). */
export function messageItem(message: Message, question?: PageQuestion): HTMLLIElement {
  const { status, fallback_text: fallback, revision } = message;
  const deleted = status === 'deleted';
  const parts = message.parts ?? [];
  const textParts = parts.filter((part) => part.type === 'text');
  const lastText = textParts.at(-1)?.part_index ?? -1;
  const joined = textParts.map((part) => part.text ?? '').join('\n');
  const from = isAgent(message.sender.id) ? 'from-agent' : 'from-user';
  const closed = question !== undefined && question.status !== 'pending';
  return h(
    'li.msg',
    {
      class: `${from}${deleted ? ' deleted' : ''}${status === 'streaming' ? ' streaming' : ''}`,
      'data-message-id': message.id,
      'data-status': status,
      'data-sender': message.sender.id,
      'data-question-id': question?.id,
      'data-question-status': question?.status,
    },
    h('div.msg-sender', nameOf(store, message.sender.id)),
    h(
      'div.bubble',
      deleted
        ? h('p.tombstone', 'This message was unsent.')
        : parts.map((part) => partOf(part, message, lastText, closed)),
    ),
    !deleted && question && questionLine(question),
    !deleted &&
      fallback &&
      fallback !== joined &&
      h('p.fallback', h('span.fallback-label', 'Fallback text'), fallback),
    reactions(message),
    h(
      'div.msg-meta',
      h('span', { title: message.created_at }, clockTime(message.created_at)),
      h('span.seq', `#${message.sequence}`),
      status === 'streaming' && h('span.badge.badge-streaming', 'streaming'),
      typeof revision === 'number' && revision > 0 && h('span.revision', `rev ${revision}`),
      receipt(message),
    ),
  );
}
