// Who may see and do what: authentication (PROTOCOL.md section 3: agent tokens and user sessions,
// 401 for the wrong kind), membership (404, SPEC rule 1 for every conversation-scoped call) and
// permission (403, PROTOCOL.md section 2).
import type { CallerKind } from '../endpoints.js';
import { forbidden, MockError, notFound } from './http.js';
import type { RouteContext } from './router.js';
import type { AgentRecord, ConversationRecord, MessageRecord, MockState, UserRecord } from './state.js';

/** An agent calling with its token. */
export type AgentCaller = { kind: 'agent'; id: string; agent: AgentRecord };

/** Who made the request. */
export type Caller = AgentCaller | { kind: 'user'; id: string; user: UserRecord };

/** The caller a rule receives, by the caller kind of its endpoint (none: undefined). */
export type CallerOf<K extends CallerKind> = K extends 'none'
  ? undefined
  : K extends 'any'
    ? Caller
    : Extract<Caller, { kind: K }>;

const unauthorized = (message: string) => new MockError(401, 'unauthorized', message);

/** The caller of the request, checked against what the endpoint takes; 401 otherwise. */
export function authenticate(state: MockState, headers: Headers, kind: CallerKind): Caller | undefined {
  if (kind === 'none') return undefined;
  const header = headers.get('authorization');
  const token = header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  if (!token) throw unauthorized('Authorization: a bearer token is required');
  const caller = state.callers.get(token);
  // The message never echoes the token: secrets stay out of errors.
  if (!caller) throw unauthorized('Authorization: the bearer token is not known');
  if (kind !== 'any' && caller.kind !== kind) {
    const takes =
      kind === 'agent' ? 'an agent token, not a user session' : 'a user session, not an agent token';
    throw unauthorized(`Authorization: this endpoint takes ${takes}`);
  }
  return caller;
}

/** True when the id is an active participant of the conversation. */
function isActiveMember(conversation: ConversationRecord, id: string): boolean {
  return conversation.participants.some((participant) => participant.id === id && participant.active);
}

/** The conversation, when the caller is an active participant; 404 otherwise. */
export function conversationFor(
  state: MockState,
  callerId: string,
  conversationId: string,
): ConversationRecord {
  const conversation = state.conversations.get(conversationId);
  if (!conversation || !isActiveMember(conversation, callerId)) throw notFound('conversation');
  return conversation;
}

/** The message, when the caller is an active participant of its conversation; 404 otherwise. */
export function messageFor(state: MockState, caller: Caller, messageId: string): MessageRecord {
  const message = state.messages.get(messageId);
  const conversation = message && state.conversations.get(message.conversation_id);
  if (!message || !conversation || !isActiveMember(conversation, caller.id)) throw notFound('message');
  return message;
}

/** The message of `:message_id` the calling agent acts on: 404 outside its conversations, 403 unless it is active. */
export function agentMessage(ctx: RouteContext<unknown, AgentCaller>): MessageRecord {
  const message = messageFor(ctx.world.state, ctx.caller, ctx.params.message_id ?? '');
  requireActive(ctx.caller.agent);
  return message;
}

/**
 * 403 unless the agent is `active`. PROTOCOL.md section 2 says "any action of an agent that is not
 * active", section 5 lists "send messages, stream, react, type or invite"; the mock reads "action"
 * as every agent call except reads (GET) and the webhook PATCH (the way an agent becomes active).
 * Rules call this after their existence and membership checks (404) and before any other 403.
 */
export function requireActive(agent: AgentRecord): void {
  if (agent.status !== 'active') {
    throw forbidden(`agent ${agent.id} is not active: set a webhook that answers webhook.test first`);
  }
}
