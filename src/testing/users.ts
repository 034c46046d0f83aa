// The user side, which only the control surface drives: users, installs, and user messages
// (which deliver message.received to every active agent of the conversation).
import { CreateUserRequest, InstallRequest, UserMessageRequest } from '../schemas/mock-control.js';
import { conversationFor } from './access.js';
import { checkJson } from './body.js';
import { createConversation } from './conversations.js';
import { notFound } from './http.js';
import { newId, newSessionToken } from './ids.js';
import { userChanged } from './live-events.js';
import type { UserRecord } from './state.js';
import { postAsUser } from './user-messages.js';
import type { MockWorld } from './world.js';

/** A user (`verified` defaults to true) and its session token. */
export function createUser(world: MockWorld, input: CreateUserRequest) {
  const { display_name, verified = true } = checkJson(CreateUserRequest, input, 'user');
  const user: UserRecord = {
    id: newId('usr'),
    display_name,
    verified,
    session_token: newSessionToken(),
    installs: new Map(),
  };
  world.state.users.set(user.id, user);
  world.state.callers.set(user.session_token, { kind: 'user', id: user.id, user });
  userChanged(world, user, 'created');
  return { user: { id: user.id, display_name, verified }, session_token: user.session_token };
}

/** The user installs the agent (any agent status): answers the `agent`-kind conversation, made once. */
export function installAgent(world: MockWorld, input: InstallRequest): { conversation_id: string } {
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

/** A user posts a text message; every active agent of the conversation gets message.received. */
export function postUserMessage(world: MockWorld, conversationId: string, input: UserMessageRequest) {
  const { user_id, text } = checkJson(UserMessageRequest, input, 'message');
  const { state } = world;
  if (!state.users.has(user_id)) throw notFound(`user_id: user ${user_id}`);
  const conversation = conversationFor(state, user_id, conversationId);
  return { message: postAsUser(world, conversation, { userId: user_id, text }) };
}
