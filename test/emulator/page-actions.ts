// What a person does on the emulator page, as the end-to-end test does it: each action waits until
// the page shows its result, never for a time to pass.
import type { Locator, Page } from 'playwright-core';

/** The page's actions and the locators the test reads, bound to one page. */
export function pageActions(page: Page) {
  /** A message in the open conversation, by its text. */
  const message = (text: string): Locator => page.locator('.msg').filter({ hasText: text });

  return {
    message,

    /** A conversation in the sidebar, by its exact title. */
    conversationButton: (title: string): Locator =>
      page
        .locator('.conversation')
        .filter({ has: page.locator('.entity-name').getByText(title, { exact: true }) }),

    /** Creates a user with the sidebar form; resolves once the user is listed. */
    async createUser(name: string): Promise<void> {
      await page.getByLabel("New user's name").fill(name);
      await page.getByRole('button', { name: 'Create user' }).click();
      await page.locator('#users .entity-name', { hasText: name }).waitFor();
    },

    /** Installs the Helper agent for a user; resolves once their conversation is open. */
    async install(userName: string): Promise<void> {
      await page.locator('#install-user').selectOption({ label: userName });
      await page.locator('#install-agent').selectOption({ label: 'Helper (@helper)' });
      await page.getByRole('button', { name: 'Install agent' }).click();
      await page.locator('#chat-members', { hasText: userName }).waitFor();
    },

    /** Posts a text in the open conversation; resolves once it is shown as the user's. */
    async say(text: string): Promise<void> {
      await page.getByLabel('Message', { exact: true }).fill(text);
      await page.getByLabel('Message', { exact: true }).press('Enter');
      await message(text).and(page.locator('.from-user')).waitFor();
    },
  };
}
