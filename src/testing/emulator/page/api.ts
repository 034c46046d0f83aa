// The only calls the page makes: the mock's control surface under /_mock, and /v1 where a user acts
// with its own session token (accepting a group invite).
import type {
  ClickActionResponse,
  CreateUserResponse,
  InstallResponse,
  UserMessageResponse,
} from '../../../schemas/mock-control.js';
import type { MockStateSnapshot } from '../../../schemas/mock-events.js';

async function request<T>(method: string, path: string, body?: unknown, token?: string): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // An empty or non-JSON answer reads as null.
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const error = (data as { error?: { code: string; message: string } } | null)?.error;
    throw new Error(
      error ? `${error.code}: ${error.message}` : `${method} ${path} answered HTTP ${response.status}`,
    );
  }
  return data as T;
}

const conversation = (id: string) => `/_mock/conversations/${encodeURIComponent(id)}`;

/** Every action of the page, one function each. */
export const api = {
  state: () => request<MockStateSnapshot>('GET', '/_mock/state'),
  createUser: (displayName: string) =>
    request<CreateUserResponse>('POST', '/_mock/users', { display_name: displayName }),
  install: (userId: string, agentId: string) =>
    request<InstallResponse>('POST', '/_mock/installs', { user_id: userId, agent_id: agentId }),
  post: (conversationId: string, userId: string, text: string) =>
    request<UserMessageResponse>('POST', `${conversation(conversationId)}/user-messages`, {
      user_id: userId,
      text,
    }),
  /** The user clicks a quick reply: the mock posts its label and delivers the postback (section 14). */
  click: (conversationId: string, userId: string, messageId: string, actionId: string) =>
    request<ClickActionResponse>('POST', `${conversation(conversationId)}/postbacks`, {
      user_id: userId,
      message_id: messageId,
      action_id: actionId,
    }),
  advance: (seconds: number) => request<unknown>('POST', '/_mock/clock/advance', { seconds }),
  reset: () => request<unknown>('POST', '/_mock/reset'),
  accept: (inviteId: string, sessionToken: string) =>
    request<unknown>(
      'POST',
      `/v1/groups/invites/${encodeURIComponent(inviteId)}/accept`,
      undefined,
      sessionToken,
    ),
};
