// Who a user message invokes (PROTOCOL.md section 14): the active agents of the conversation whose
// `@handle` the text names, or the agent of an `agent`-kind conversation, named or not.
import type { ConversationRecord, MockState } from './state.js';

// `@` at the start or after a non-handle character, the handle, then the end or a non-handle character.
const MENTION = /(?:^|[^a-z0-9_])@([a-z0-9_]+)(?![a-z0-9_])/gi;

/** The handles a text names, lower-cased, each once. */
export function mentionedHandles(text: string): Set<string> {
  const handles = new Set<string>();
  for (const match of text.matchAll(MENTION)) if (match[1]) handles.add(match[1].toLowerCase());
  return handles;
}

/** The ids of the agents a user's text invokes in `conversation`, in participant order. */
export function invokedAgents(state: MockState, conversation: ConversationRecord, text: string): string[] {
  const agents = conversation.participants.filter((p) => p.kind === 'agent');
  if (conversation.kind === 'agent') return agents.map((agent) => agent.id);
  const named = mentionedHandles(text);
  if (named.size === 0) return [];
  return agents
    .filter((agent) => agent.active)
    .filter((agent) => named.has(state.agents.get(agent.id)?.handle.toLowerCase() ?? '\u0000'))
    .map((agent) => agent.id);
}
