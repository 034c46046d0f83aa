// The user side, which only the control surface drives: users, installs, and a user's messages,
// typed or clicked. A message is stored with the agents it invokes (an `@handle` it names, or the
// agent of an `agent`-kind conversation), then delivered as message.received to every active agent
// of the conversation (PROTOCOL.md sections 6 and 14); a click on a quick reply posts the action's
// label as a reply to its actions block, and its delivery carries `postback`.

import type { Message } from '../schemas/messages.js';
import {
  ClickActionRequest,
  CreateUserRequest,
  InstallRequest,
  UserMessageRequest,
} from '../schemas/mock-control.js';
import { activeTraceparent } from '../telemetry.js';
import { conversationFor } from './access.js';
import { checkJson } from './body.js';
import { createConversation } from './conversations.js';
import { invalid, notFound } from './http.js';
import { newId, newToken } from './ids.js';
import { userChanged } from './live-feed.js';
import { createMessage, messageView } from './messages.js';
import type { ConversationRecord, MockState, MockWorld, UserRecord } from './state.js';

/** A user (`verified` defaults to true) and its session token. */
export function createUser(world: MockWorld, input: unknown) {
  const { display_name, verified = true } = checkJson(CreateUserRequest, input, 'user');
  const user: UserRecord = {
    id: newId('usr'),
    display_name,
    verified,
    session_token: newToken('ams_us_'),
    installs: new Map(),
  };
  world.state.users.set(user.id, user);
  world.state.callers.set(user.session_token, { kind: 'user', id: user.id, user });
  userChanged(world, user, 'created');
  return { user: { id: user.id, display_name, verified }, session_token: user.session_token };
}

/** The user installs the agent (any agent status): answers the `agent`-kind conversation, made once. */
export function installAgent(world: MockWorld, input: unknown): { conversation_id: string } {
  const { user_id, agent_id } = checkJson(InstallRequest, input, 'install');
  const { state } = world;
  const user = state.users.get(user_id);
  if (!user) throw notFound(`user_id: user ${user_id}`);
  if (!state.agents.has(agent_id)) throw notFound(`agent_id: agent ${agent_id}`);
  const installed = user.installs.get(agent_id);
  if (installed !== undefined) return { conversation_id: installed };
  const conversation = createConversation(world, 'agent', null, [
    { id: user_id, kind: 'user' },
    { id: agent_id, kind: 'agent' },
  ]);
  user.installs.set(agent_id, conversation.id);
  userChanged(world, user, 'updated');
  return { conversation_id: conversation.id };
}

/**
 * A user posts a text message; every active agent of the conversation gets message.received, carrying
 * `traceparent` when the post had one (its request's header, or the span active around the call).
 */
export function postUserMessage(
  world: MockWorld,
  conversationId: string,
  input: unknown,
  traceparent: string | undefined = activeTraceparent(),
) {
  const { user_id, text } = checkJson(UserMessageRequest, input, 'message');
  const { state } = world;
  if (!state.users.has(user_id)) throw notFound(`user_id: user ${user_id}`);
  const conversation = conversationFor(state, user_id, conversationId);
  return { message: postAsUser(world, conversation, { userId: user_id, text, traceparent }) };
}

/** What a user posts: its text, and for a click the part it answers and the webhook's `postback`. */
interface UserPost {
  userId: string;
  text: string;
  traceparent?: string | undefined;
  replyTo?: { message_id: string; part_index: number };
  postback?: { actionId: string; value: string; messageId: string };
}

/** Stores the message and delivers it; answers the snake_case Message. */
function postAsUser(world: MockWorld, conversation: ConversationRecord, post: UserPost): Message {
  const message = createMessage(world, conversation, {
    sender_id: post.userId,
    status: 'sent',
    blocks: [{ id: newId('blk'), type: 'text', text: post.text }],
    invoked_agents: invokedAgents(world.state, conversation, post.text),
    reply_to: post.replyTo ?? null,
  });
  const view = messageView(message);
  for (const participant of conversation.participants) {
    if (participant.kind === 'agent' && participant.active) {
      world.webhooks.send(
        participant.id,
        'message.received',
        {
          conversationId: conversation.id,
          message: view,
          // The webhook body carries the click; the stored message does not (section 14).
          ...(post.postback ? { postback: post.postback } : {}),
        },
        post.traceparent,
      );
    }
  }
  return view;
}

// `@` at the start or after a non-handle character, a handle, then the end or a non-handle character.
const MENTION = /(?:^|[^a-z0-9_])@([a-z0-9_]+)(?![a-z0-9_])/gi;

/** The ids of the agents a user's text invokes in `conversation` (each active agent it names), in participant order. */
function invokedAgents(state: MockState, conversation: ConversationRecord, text: string): string[] {
  const agents = conversation.participants.filter((p) => p.kind === 'agent');
  if (conversation.kind === 'agent') return agents.map((agent) => agent.id);
  const named = new Set(Array.from(text.matchAll(MENTION), (match) => match[1]!.toLowerCase()));
  return agents
    .filter((agent) => agent.active && named.has(state.agents.get(agent.id)?.handle.toLowerCase() ?? ''))
    .map((agent) => agent.id);
}

/**
 * The user clicks `action_id` of message `message_id`: 404 for an unknown user, conversation,
 * message or action, 400 for a consent card's accept, which is the accept call of section 12, never
 * a postback (every other action is one: the send schema takes no other behaviour).
 */
export function clickAction(world: MockWorld, conversationId: string, input: unknown): { message: Message } {
  const { user_id, message_id, action_id } = checkJson(ClickActionRequest, input, 'click');
  const { state } = world;
  if (!state.users.has(user_id)) throw notFound(`user_id: user ${user_id}`);
  const conversation = conversationFor(state, user_id, conversationId);
  const target = conversation.messages.find((message) => message.id === message_id);
  if (!target || target.status === 'deleted') {
    throw notFound(`message_id: message ${message_id} in conversation ${conversation.id}`);
  }
  for (const [partIndex, block] of target.blocks.entries()) {
    if (block.type !== 'actions') continue;
    const action = block.actions.find((a) => a.actionId === action_id);
    if (!action) continue;
    const { behavior } = action;
    // The invite's consent card posts `accept:<invite id>` (invites.ts); accepting goes through section 12.
    const invite = /^accept:(.*)$/.exec(behavior.value)?.[1];
    if (invite !== undefined && state.invites.has(invite))
      throw invalid(`action_id: ${action_id} is not a postback action`);
    const message = postAsUser(world, conversation, {
      userId: user_id,
      text: action.label,
      replyTo: { message_id: target.id, part_index: partIndex },
      postback: { actionId: action_id, value: behavior.value, messageId: target.id },
    });
    return { message };
  }
  throw notFound(`action_id: action ${action_id} in message ${message_id}`);
}
