// How a stored message looks on the wire: camelCase blocks in the send answer and stream events,
// the snake_case Message of SPEC.md in history, conversations and message.received.
import type { Message, MessagePart } from '../schemas/messages.js';
import type { BlockRecord, ConversationRecord, MessageRecord } from './state.js';
import { iso } from './world.js';

/** A block in the send shape, with its id. */
export function sendBlock(block: BlockRecord): Record<string, unknown> {
  switch (block.type) {
    case 'text':
      return { id: block.id, type: 'text', text: block.text ?? '' };
    case 'actions':
      return { id: block.id, type: 'actions', layout: block.layout, actions: block.actions };
    default:
      return { id: block.id, type: block.type, attachmentId: block.attachmentId };
  }
}

/** A block as a history part (PROTOCOL.md section 7). */
function part(block: BlockRecord, index: number): MessagePart {
  switch (block.type) {
    case 'text':
      return { part_index: index, type: 'text', text: block.text ?? '' };
    case 'actions':
      return { part_index: index, type: 'actions', actions: block.actions as MessagePart['actions'] };
    default:
      return { part_index: index, type: block.type, attachment_id: block.attachmentId };
  }
}

/** The text of a message's text blocks, joined, as its fallback when none was given. */
export function joinedText(blocks: readonly BlockRecord[]): string {
  return blocks
    .filter((block) => block.type === 'text')
    .map((block) => block.text ?? '')
    .join('\n');
}

/** The snake_case Message of SPEC.md. */
export function messageView(message: MessageRecord): Message {
  const deleted = message.status === 'deleted';
  return {
    id: message.id,
    conversation_id: message.conversation_id,
    sequence: message.sequence,
    sender: { id: message.sender_id },
    parts: deleted ? [] : message.blocks.map(part),
    fallback_text: deleted ? null : (message.fallback_text ?? joinedText(message.blocks)),
    status: message.status,
    created_at: iso(message.created_at),
    reply_to: message.reply_to,
    invoked_agents: [...(message.invoked_agents ?? [])],
    suggestions: [],
    reactions: deleted ? [] : message.reactions.map((reaction) => ({ ...reaction })),
    delivered_at: message.delivered_at ? iso(message.delivered_at) : null,
    read_at: message.read_at ? iso(message.read_at) : null,
    edited_at: null,
    revisions: [],
    revision: message.revision,
  };
}

/** The tombstone answer of unsend: only what survives deletion. */
export function tombstoneView(message: MessageRecord): Record<string, unknown> {
  return {
    id: message.id,
    conversation_id: message.conversation_id,
    sequence: message.sequence,
    sender: { id: message.sender_id },
    status: message.status,
    created_at: iso(message.created_at),
  };
}

/** The newest messages first, below `beforeSequence` when given. */
export function newestFirst(
  conversation: ConversationRecord,
  limit: number,
  beforeSequence?: number,
): MessageRecord[] {
  const below =
    beforeSequence === undefined
      ? conversation.messages
      : conversation.messages.filter((m) => m.sequence < beforeSequence);
  return below.slice(-limit).reverse();
}
