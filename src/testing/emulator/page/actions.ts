// What a person does on the page: its forms, its buttons and the buttons drawn from the mock's state.
// Each is one call to the mock's control surface under /_mock, or to /v1 where a user acts with its
// own session token (accepting a group invite); the toast shows what failed.
import type { InstallResponse } from '../../../schemas/mock-control.js';
import { MAX_ADVANCE_SECONDS } from '../../../schemas/mock-limits.js';
import { showTab } from './activity.js';
import { actingUser } from './chat.js';
import { byId } from './dom.js';
import type { PageConversation } from './state.js';
import { store } from './store.js';

let toastTimer: ReturnType<typeof setTimeout> | undefined;
/** Shows a failure for six seconds. */
export function toast(message: string) {
  const el = byId('toast');
  el.textContent = message;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.hidden = true;
  }, 6000);
}

/**
 * Calls the mock (a POST unless `method` says otherwise) with `button` disabled until the answer:
 * answers its JSON (null for an empty answer), or shows what failed in the toast and answers undefined.
 */
export async function call<T>(
  path: string,
  { method = 'POST', body, token, button }: Call = {},
): Promise<T | undefined> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  if (button) button.disabled = true;
  try {
    const response = await fetch(path, { method, headers, body: JSON.stringify(body) });
    // An empty or non-JSON answer reads as null.
    const data = await response.json().catch(() => null);
    if (response.ok) return data as T;
    const error = (data as { error?: { code: string; message: string } } | null)?.error;
    toast(error ? `${error.code}: ${error.message}` : `${method} ${path} answered HTTP ${response.status}`);
  } catch (error) {
    toast(`${method} ${path} failed: ${error}`);
  } finally {
    if (button) button.disabled = false;
  }
  return undefined;
}

/** What a call sends: its method, JSON body and bearer token, and the button that sent it. */
interface Call {
  method?: string;
  body?: unknown;
  token?: string;
  button?: HTMLButtonElement | null;
}

/** Listens to a form's submit, with the button that sent it. */
function onSubmit(id: string, handle: (submitter: HTMLButtonElement | null) => unknown) {
  byId(id).addEventListener('submit', (event) => {
    event.preventDefault();
    handle((event as SubmitEvent).submitter as HTMLButtonElement | null);
  });
}

const conversationPath = (id: string) => `/_mock/conversations/${encodeURIComponent(id)}`;

/**
 * Binds every action: the forms (users, installs, the composer, the clock's seconds), and every
 * button, which says what it does by its data attributes, id or role (one listener reads them).
 */
export function bindActions(
  select: (conversationId: string) => void,
  open: () => PageConversation | undefined,
) {
  const input = (id: string) => byId<HTMLInputElement>(id);
  onSubmit('create-user', async (button) => {
    const name = input('create-user-name').value.trim();
    if (name && (await call('/_mock/users', { button, body: { display_name: name } })))
      input('create-user-name').value = '';
  });
  onSubmit('install', async (button) => {
    const body = { user_id: input('install-user').value, agent_id: input('install-agent').value };
    const done = await call<InstallResponse>('/_mock/installs', { button, body });
    if (done) select(done.conversation_id);
  });
  onSubmit('composer', async (button) => {
    const text = input('composer-text');
    const conversation = open();
    const user = conversation && actingUser(conversation);
    if (!conversation || !user || !text.value.trim()) return;
    const body = { user_id: user.id, text: text.value };
    if (await call(`${conversationPath(conversation.id)}/user-messages`, { body, button })) text.value = '';
    text.focus();
  });
  onSubmit('advance-form', (button) => {
    const seconds = Number(input('advance-seconds').value);
    // The mock's own cap on one advance; it answers 400 beyond it anyway.
    if (!(seconds >= 0 && seconds <= MAX_ADVANCE_SECONDS)) {
      return toast(`Seconds: a number from 0 to ${MAX_ADVANCE_SECONDS} (ten years).`);
    }
    return call('/_mock/clock/advance', { button, body: { seconds } });
  });
  document.addEventListener('click', (event) => {
    const button = (event.target as Element).closest('button');
    if (!button) return;
    const { conversationId, actionId, acceptUser, advance } = button.dataset;
    if (button.role === 'tab') showTab(button);
    if (advance) void call('/_mock/clock/advance', { button, body: { seconds: Number(advance) } });
    if (button.id === 'reset' && confirm('Empty the mock: every agent, user, conversation and log?'))
      void call('/_mock/reset', { button });
    if (conversationId) select(conversationId);
    const conversation = open();
    if (actionId && conversation) {
      // A quick reply is clicked by the user the page posts as: the mock posts its label and
      // delivers the postback (PROTOCOL.md section 14).
      const user = actingUser(conversation);
      if (!user) return toast('This conversation has no user to post as.');
      const message_id = button.closest<HTMLElement>('[data-message-id]')?.dataset.messageId;
      const body = { user_id: user.id, message_id, action_id: actionId };
      void call(`${conversationPath(conversation.id)}/postbacks`, { body });
    }
    const inviteId = button.closest<HTMLElement>('[data-invite-id]')?.dataset.inviteId;
    const user = acceptUser ? store.users.get(acceptUser) : undefined;
    if (inviteId && user) {
      const token = user.session_token;
      void call(`/v1/groups/invites/${encodeURIComponent(inviteId)}/accept`, { token });
    }
  });
}
