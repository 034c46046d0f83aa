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

// The three answers there are, made once (the context copies their fields).
const IN_GROUP: Addressing = Object.freeze({ mentioned: false, isGroup: true, isDirect: false });
const NAMED_IN_GROUP: Addressing = Object.freeze({ mentioned: true, isGroup: true, isDirect: false });
const NAMED_DIRECT: Addressing = Object.freeze({ mentioned: true, isGroup: false, isDirect: true });

/**
 * Answers the addressing of a message, asking the service at most once per conversation: at once
 * when nothing needs asking (the usual case), a promise when the service is asked. @internal
 */
export function createKindCache(client: AgentClient) {
  const kinds = new Map<string, string>();
  const ask = async (conversationId: string): Promise<Addressing> => {
    const { conversation } = await client.conversations.retrieve(conversationId);
    // The agent's read shape has a counterpart user in a one-to-one conversation, none in a group.
    // `kind` is not in SPEC's agent read shape: read it if a service sends it anyway.
    const shown = (conversation as { kind?: unknown }).kind;
    const kind = typeof shown === 'string' ? shown : conversation.counterpart_user ? 'agent' : 'group';
    if (kinds.size >= MAX_REMEMBERED) kinds.delete(kinds.keys().next().value ?? '');
    kinds.set(conversationId, kind);
    return kind === 'group' ? NAMED_IN_GROUP : NAMED_DIRECT;
  };
  return (event: MessageReceivedEvent): Addressing | Promise<Addressing> => {
    const mentioned = event.message.invoked_agents?.includes(event.agentId) === true;
    if (!mentioned) return IN_GROUP;
    const kind = kinds.get(event.conversationId);
    if (kind === undefined) return ask(event.conversationId);
    return kind === 'group' ? NAMED_IN_GROUP : NAMED_DIRECT;
  };
}
