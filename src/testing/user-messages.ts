// A user's message into a conversation, typed or clicked: stored with the agents it invokes, then
// delivered as message.received to every active agent of the conversation (PROTOCOL.md sections 6, 14).
import type { Message } from '../schemas/messages.js';
import { newId } from './ids.js';
import { invokedAgents } from './mentions.js';
import { createMessage } from './message-store.js';
import { messageView } from './message-view.js';
import type { ConversationRecord } from './state.js';
import type { MockWorld } from './world.js';

/** What a user posts: its text, and for a click the part it answers and the webhook's `postback`. */
export interface UserPost {
  userId: string;
  text: string;
  replyTo?: { message_id: string; part_index: number };
  postback?: { actionId: string; value: string; messageId: string };
}

/** Stores the message and delivers it; answers the snake_case Message. */
export function postAsUser(world: MockWorld, conversation: ConversationRecord, post: UserPost): Message {
  const message = createMessage(world, conversation, {
    sender_id: post.userId,
    status: 'sent',
    blocks: [{ id: newId('blk'), type: 'text', text: post.text }],
    invoked_agents: invokedAgents(world.state, conversation, post.text),
    ...(post.replyTo ? { reply_to: post.replyTo.message_id, reply_part_index: post.replyTo.part_index } : {}),
  });
  const view = messageView(message);
  for (const participant of conversation.participants) {
    if (participant.kind === 'agent' && participant.active) {
      world.webhooks.send(participant.id, 'message.received', {
        conversationId: conversation.id,
        message: view,
        // The webhook body carries the click; the stored message does not (section 14).
        ...(post.postback ? { postback: post.postback } : {}),
      });
    }
  }
  return view;
}
