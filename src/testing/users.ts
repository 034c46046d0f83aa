// The user side, which only the control surface drives: users, installs, and user messages
// (which deliver message.received to every active agent of the conversation).
import type * as z from 'zod/mini';
import { describeIssues, safeParse } from '../schemas/issues.js';
import { CreateUserRequest, InstallRequest, UserMessageRequest } from '../schemas/mock-control.js';
import { conversationFor } from './access.js';
import { createConversation } from './conversations.js';
import { invalid, notFound } from './http.js';
import { newId, newSessionToken } from './ids.js';
import { userChanged } from './live-events.js';
import type { UserRecord } from './state.js';
import { postAsUser } from './user-messages.js';
import type { MockWorld } from './world.js';

function check<S extends z.ZodMiniType>(schema: S, input: unknown, root: string): z.output<S> {
  const parsed = safeParse(schema, input);
  if (!parsed.success) throw invalid(describeIssues(parsed.error, root));
  return parsed.data;
}

/** A user (`verified` defaults to true) and its session token. */
export function createUser(world: MockWorld, input: CreateUserRequest) {
  const { display_name, verified = true } = check(CreateUserRequest, input, 'user');
  const user: UserRecord = {
    id: newId('usr'),
    display_name,
    verified,
    session_token: newSessionToken(),
    installs: new Set(),
  };
  world.state.users.set(user.id, user);
  userChanged(world, user, 'created');
  return { user: { id: user.id, display_name, verified }, session_token: user.session_token };
}

/** The user installs the agent (any agent status): answers the `agent`-kind conversation, made once. */
export function installAgent(world: MockWorld, input: InstallRequest): { conversation_id: string } {
  const { user_id, agent_id } = check(InstallRequest, input, 'install');
  const { state } = world;
  const user = state.users.get(user_id);
  if (!user) throw notFound(`user_id: user ${user_id}`);
  if (!state.agents.has(agent_id)) throw notFound(`agent_id: agent ${agent_id}`);
  const installed = user.installs.has(agent_id);
  user.installs.add(agent_id);
  const existing = [...state.conversations.values()].find(
    (c) =>
      c.kind === 'agent' &&
      c.participants.some((p) => p.id === user_id) &&
      c.participants.some((p) => p.id === agent_id),
  );
  const conversation =
    existing ??
    createConversation(world, 'agent', null, [
      { id: user_id, kind: 'user' },
      { id: agent_id, kind: 'agent' },
    ]);
  if (!installed) userChanged(world, user, 'updated');
  return { conversation_id: conversation.id };
}

/** A user posts a text message; every active agent of the conversation gets message.received. */
export function postUserMessage(world: MockWorld, conversationId: string, input: UserMessageRequest) {
  const { user_id, text } = check(UserMessageRequest, input, 'message');
  const { state } = world;
  if (!state.users.has(user_id)) throw notFound(`user_id: user ${user_id}`);
  const conversation = conversationFor(state, user_id, conversationId);
  return { message: postAsUser(world, conversation, { userId: user_id, text }) };
}
