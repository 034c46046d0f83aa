// A service Message as Chat SDK's normalized Message: the author is "me" when the agent sent it,
// a mention when the service lists the agent in `invoked_agents` (PROTOCOL.md section 14).

import { type Attachment, Message as ChatMessage, parseMarkdown } from 'chat';
import type { Message, SendMessageResponse } from '../schemas/messages.js';
import type { ReplyResult } from '../streaming/options.js';
import { type AgentMessagingThread, encodeThreadId } from './thread-id.js';

/**
 * `raw` of what the adapter hands Chat SDK: the service's Message for received and fetched messages,
 * the send answer's message for a post, the reply's result for a stream.
 */
export type AgentMessagingRawMessage = Message | SendMessageResponse['message'] | ReplyResult;

/** The text a user sees: text parts joined by newlines, the fallback text when there are none. */
export function messageText(message: Message): string {
  const texts = (message.parts ?? [])
    .filter((part) => typeof part.text === 'string')
    .map((part) => part.text);
  return texts.length > 0 ? texts.join('\n') : (message.fallback_text ?? '');
}

// A file part names its attachment; the bytes are fetched through the client when wanted.
function attachmentsOf(message: Message): Attachment[] {
  return (message.parts ?? [])
    .filter((part) => part.attachment_id !== undefined)
    .map((part) => ({ type: part.type === 'image' ? 'image' : 'file', name: String(part.attachment_id) }));
}

/** Maps a service Message of `thread` into Chat SDK's Message, seen by the agent `agentId`. */
export function toChatMessage(
  message: Message,
  thread: AgentMessagingThread,
  agentId: string,
  displayName: (id: string) => string = (id) => id,
): ChatMessage<AgentMessagingRawMessage> {
  const text = messageText(message);
  const senderId = message.sender.id;
  const isMe = senderId === agentId;
  return new ChatMessage<AgentMessagingRawMessage>({
    id: message.id,
    threadId: encodeThreadId(thread),
    text,
    formatted: parseMarkdown(text),
    raw: message,
    author: {
      userId: senderId,
      userName: displayName(senderId),
      fullName: displayName(senderId),
      isBot: isMe || senderId.startsWith('agt_') ? true : senderId.startsWith('usr_') ? false : 'unknown',
      isMe,
    },
    metadata: {
      dateSent: new Date(message.created_at),
      edited: Boolean(message.edited_at),
      ...(message.edited_at ? { editedAt: new Date(message.edited_at) } : {}),
    },
    attachments: attachmentsOf(message),
    // The service decides mentions (the `@handle` rule); only a message it names us in is one.
    isMention: !isMe && (message.invoked_agents ?? []).includes(agentId),
  });
}
