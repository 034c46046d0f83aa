// Conversations as the service's history gives them (newest first, wire-shaped Messages), for the
// toModelMessages tests and the type checks against the real SDKs.
import type { Message } from 'agent-messaging';

export const AGENT = 'agt_bot';
const at = '2026-01-01T00:00:00.000Z';
const text = (t: string, part_index = 0) => ({ part_index, type: 'text', text: t });

function message(
  sequence: number,
  sender: string,
  parts: Message['parts'],
  extra: Partial<Message> = {},
): Message {
  return {
    id: `msg_${sequence}`,
    conversation_id: 'cnv_1',
    sequence,
    sender: { id: sender },
    parts,
    fallback_text: parts?.map((part) => part.text ?? '').join('\n') ?? null,
    status: 'sent',
    created_at: at,
    ...extra,
  };
}

/** Three turns with Ada: a tombstone, a quick-reply click, a cut reply; newest first. */
export const threeTurns: Message[] = [
  message(6, 'usr_ada', [text('Thanks 👩‍👩‍👧 日本 cafe\u0301')]),
  message(5, AGENT, [text('Tomorrow: rain, then … [interrupted]')]),
  // The click: the label as a text part, replying to the message with the quick replies.
  message(4, 'usr_ada', [text('Tomorrow too')], { reply_to: { message_id: 'msg_2', part_index: 1 } }),
  message(3, 'usr_ada', [], { status: 'deleted', fallback_text: null }),
  message(2, AGENT, [
    text('Sunny, 21 °C. Anything else?'),
    { part_index: 1, type: 'actions', actions: [{ actionId: 'tomorrow', label: 'Tomorrow too' }] },
  ]),
  message(1, 'usr_ada', [text("What's the weather in Oslo?")]),
];

/** A group: Ada and Bob, and the agent's reply with a map; oldest first this time. */
export const group: Message[] = [
  message(1, 'usr_ada', [text('@bot plan a trip')]),
  message(2, 'usr_bob', [text('I want Rome')]),
  message(3, AGENT, [text('Here is the map'), { part_index: 1, type: 'image', attachment_id: 'att_map' }]),
  message(4, 'usr_ada', [text('Looks good')]),
  message(5, 'usr_bob', [{ part_index: 0, type: 'file', attachment_id: 'att_plan' }]),
];

/** Where the test says the attachments are. */
export const fileUrl = ({ attachmentId }: { attachmentId: string }) =>
  attachmentId === 'att_map' ? 'https://files.example/map.png' : undefined;
