// Chat SDK names a conversation by a thread id string. Ours carries the conversation's kind as the
// adapter learned it: `ams:agent:cnv_...` is a user's own conversation with the agent (a direct
// message), `ams:group:cnv_...` a group. Anyone can write such a string, so the adapter decides
// `isDM` from what the service said of the conversation, never from the string.

import { ValidationError } from '../core/errors.js';

/** The kinds of conversation an agent takes part in. */
export type ConversationKind = 'agent' | 'group';

/** What a thread id holds. */
export interface AgentMessagingThread {
  kind: ConversationKind;
  conversationId: string;
}

const PREFIX = 'ams';

/** `ams:<kind>:<conversation id>`. */
export function encodeThreadId({ kind, conversationId }: AgentMessagingThread): string {
  return `${PREFIX}:${kind}:${conversationId}`;
}

/** The kind and conversation id of a thread id; a ValidationError for anything else. */
export function decodeThreadId(threadId: string): AgentMessagingThread {
  const [prefix, kind, conversationId, ...rest] = String(threadId).split(':');
  if (prefix !== PREFIX || (kind !== 'agent' && kind !== 'group') || !conversationId || rest.length > 0) {
    throw new ValidationError(
      [
        {
          field: 'threadId',
          message: `must look like ams:agent:cnv_... or ams:group:cnv_..., got ${JSON.stringify(threadId)}`,
        },
      ],
      'chat-sdk',
    );
  }
  return { kind, conversationId };
}
