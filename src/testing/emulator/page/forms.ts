// The page's forms and buttons (create a user, install an agent, write, move the clock, reset), and
// the toast that shows what failed.
import { MAX_ADVANCE_SECONDS } from '../../../schemas/mock-limits.js';
import { api } from './api.js';
import { actingUser } from './chat.js';
import { byId } from './dom.js';
import type { PageConversation } from './state.js';

let toastTimer: ReturnType<typeof setTimeout> | undefined;
/** Shows a failure for six seconds. */
export function toast(message: string) {
  const el = byId('toast');
  el.textContent = message;
  el.className = 'toast error';
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.hidden = true;
  }, 6000);
}

/** The message of anything thrown. */
export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Runs an action with its button disabled; a failure shows in the toast. */
export async function run<T>(
  button: HTMLButtonElement | null,
  work: () => Promise<T>,
): Promise<T | undefined> {
  if (button) button.disabled = true;
  try {
    return await work();
  } catch (error) {
    toast(messageOf(error));
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

/** Listens to a form's submit, with the button that sent it. */
function onSubmit(id: string, handle: (submitter: HTMLButtonElement | null) => unknown) {
  byId(id).addEventListener('submit', (event) => {
    event.preventDefault();
    handle((event as SubmitEvent).submitter as HTMLButtonElement | null);
  });
}

/** Binds the page's forms and buttons: users, installs, the composer, the clock and Reset. */
export function bindForms(
  select: (conversationId: string) => void,
  open: () => PageConversation | undefined,
) {
  const input = (id: string) => byId<HTMLInputElement>(id);
  onSubmit('create-user', async (button) => {
    const name = input('create-user-name').value.trim();
    if (name && (await run(button, () => api.createUser(name)))) input('create-user-name').value = '';
  });
  onSubmit('install', async (button) => {
    const userId = byId<HTMLSelectElement>('install-user').value;
    const agentId = byId<HTMLSelectElement>('install-agent').value;
    const done = await run(button, () => api.install(userId, agentId));
    if (done) select(done.conversation_id);
  });
  onSubmit('composer', async () => {
    const text = input('composer-text');
    const conversation = open();
    const user = conversation && actingUser(conversation);
    if (!conversation || !user || !text.value.trim()) return;
    const value = text.value;
    if (await run(byId<HTMLButtonElement>('composer-send'), () => api.post(conversation.id, user.id, value)))
      text.value = '';
    text.focus();
  });
  for (const button of document.querySelectorAll<HTMLButtonElement>('[data-advance]')) {
    button.addEventListener('click', () => run(button, () => api.advance(Number(button.dataset.advance))));
  }
  onSubmit('advance-form', (button) => {
    const seconds = Number(input('advance-seconds').value);
    // The mock's own cap on one advance; it answers 400 beyond it anyway.
    if (!(seconds >= 0 && seconds <= MAX_ADVANCE_SECONDS)) {
      return toast(`Seconds: a number from 0 to ${MAX_ADVANCE_SECONDS} (ten years).`);
    }
    return run(button, () => api.advance(seconds));
  });
  byId('reset').addEventListener('click', () => {
    if (confirm('Empty the mock: every agent, user, conversation and log?'))
      run(byId<HTMLButtonElement>('reset'), api.reset);
  });
}
