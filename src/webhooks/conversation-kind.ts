// Whether a message reached the bot in a group, and whether it names the bot. The webhook body has
// no conversation kind, but PROTOCOL.md section 14 does the rest: in an agent-kind conversation
// `invoked_agents` always holds the agent, so a message that does not invoke it is in a group. Only a
// message that does invoke it needs the kind, asked once per conversation and remembered (the agent's
// read shape of a conversation has a counterpart user in a one-to-one conversation, none in a group).

import type { AgentClient } from '../client/agent-client.js';
import type { MessageReceivedEvent } from '../schemas/webhooks.js';

/** What the context says about where the message was sent. */
export interface Addressing {
  mentioned: boolean;
  isGroup: boolean;
  isDirect: boolean;
}

const MAX_REMEMBERED = 10_000;

/** Answers the addressing of a message, asking the service at most once per conversation. @internal */
export function createKindCache(client: AgentClient) {
  const kinds = new Map<string, string>();
  return async (event: MessageReceivedEvent): Promise<Addressing> => {
    const mentioned = (event.message.invoked_agents ?? []).includes(event.agentId);
    if (!mentioned) return { mentioned, isGroup: true, isDirect: false };
    let kind = kinds.get(event.conversationId);
    if (kind === undefined) {
      const { conversation } = await client.conversations.retrieve(event.conversationId);
      // The agent's read shape has a counterpart user in a one-to-one conversation, none in a group.
      // `kind` is not in SPEC's agent read shape: read it if a service sends it anyway.
      const shown = (conversation as { kind?: unknown }).kind;
      kind = typeof shown === 'string' ? shown : conversation.counterpart_user ? 'agent' : 'group';
      if (kinds.size >= MAX_REMEMBERED) kinds.delete(kinds.keys().next().value ?? '');
      kinds.set(event.conversationId, kind);
    }
    const isGroup = kind === 'group';
    return { mentioned, isGroup, isDirect: !isGroup };
  };
}
