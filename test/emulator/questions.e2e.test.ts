// Questions in the emulator, in a real browser: the refund example (examples/refund-dialog.ts) on its
// own port against the mock on another, its deadlines on the mock's clock, and headless Chromium
// answering as the user would. The page knows only what went over the wire: the metadata the bot's
// messages carry (docs/bot.md, "On the wire"), checked here in the mock's snapshot too.

import type { Page } from 'playwright-core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { serveBot } from '../../examples/echo-bot.js';
import { createRefundBot, type Refunds } from '../../examples/refund-dialog.js';
import { newAgent, startMock, stopAfterTest, verifyWebhook } from '../examples/setup.js';
import { launchChromium } from './browser.js';
import { pageActions } from './page-actions.js';

// Every wait on the page waits for something to appear, never for a time to pass: the bounds only
// matter on a loaded machine.
const WAIT_MS = 120_000;

/** The refund bot on a loopback port, the mock on another, and the page open on their conversation. */
async function refundInTheEmulator() {
  const { mock, baseUrl } = await startMock();
  const agent = await newAgent(mock, baseUrl);
  const refunded: Parameters<Refunds['refund']>[0][] = [];
  const bot = createRefundBot(
    { ...agent.options, clock: () => mock.clock.now() },
    { refund: async (order) => void refunded.push(order) },
  );
  onTestFinished(() => bot.close());
  await verifyWebhook(bot.client, agent.agentId, stopAfterTest(await serveBot(bot, 0, '127.0.0.1')));
  const browser = await launchChromium();
  onTestFinished(() => browser.close());
  browser.context.setDefaultTimeout(WAIT_MS);
  const page = await browser.context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(`${baseUrl}/#${agent.conversationId}`);
  await page.locator('#connection[data-state="live"]').waitFor();
  return { mock, bot, page, refunded, pageErrors, ...pageActions(page) };
}

/** The message `id` on the page once its question reads `status`. */
const questionIs = (page: Page, id: string, status: string) =>
  page.locator(`.msg[data-message-id="${id}"][data-question-status="${status}"]`).waitFor();

/** Whether each quick reply under message `id` is disabled. */
const buttonsDisabled = (page: Page, id: string) =>
  page
    .locator(`.msg[data-message-id="${id}"] .quick-replies button`)
    .evaluateAll((buttons) => buttons.map((button) => (button as HTMLButtonElement).disabled));

/** The id of the newest message on the page whose question is pending. */
async function newestPending(page: Page): Promise<string> {
  const pending = page.locator('.msg[data-question-status="pending"]').last();
  await pending.waitFor();
  return (await pending.getAttribute('data-message-id')) ?? '';
}

describe('questions in the emulator', () => {
  it(
    'shows a question pending, then answered by a click or a text, timed out, or cancelled, its buttons inactive once it ended',
    async () => {
      const w = await refundInTheEmulator();
      const metadataOf = (id: string) =>
        w.mock.snapshot().conversations[0]?.messages.find((message) => message.id === id)?.metadata;

      // Asked: pending, with its deadline, its buttons live.
      await w.say('I want a refund');
      const confirm = await newestPending(w.page);
      expect(metadataOf(confirm)).toEqual({ question: { name: 'refund-confirm', timeout_ms: 600_000 } });
      await expect
        .poll(() => w.page.locator(`.msg[data-message-id="${confirm}"] .question`).textContent())
        .toMatch(/waiting for an answer.*times out at \d\d:\d\d:\d\d \(in (9 min \d+ s|10 min)\)/);
      expect(await buttonsDisabled(w.page, confirm)).toEqual([false, false]);

      // A click answers it: both of its buttons go inactive; the follow-up question waits for text.
      await w.page
        .locator(`.msg[data-message-id="${confirm}"]`)
        .getByRole('button', { name: 'Yes, refund it' })
        .click();
      await questionIs(w.page, confirm, 'answered');
      expect(await buttonsDisabled(w.page, confirm)).toEqual([true, true]);
      const reason = await newestPending(w.page);
      expect(metadataOf(reason)).toEqual({
        question: { name: 'refund-reason', timeout_ms: 1_800_000 },
        question_end: { id: confirm, outcome: 'answered' },
      });

      // A text answers the follow-up (after one re-ask, which is the same question, still pending).
      await w.say('broken');
      await w.message('Could you say a little more?').waitFor();
      expect(await w.page.locator('.msg[data-question-status="pending"]').count()).toBe(2);
      await w.say('The parcel arrived crushed.');
      await questionIs(w.page, reason, 'answered');
      await w.message('Refunded $42 for order o_42').waitFor();
      expect(await w.page.locator('.msg[data-question-status="pending"]').count()).toBe(0);
      expect(w.refunded).toEqual([{ orderId: 'o_42', amount: 42, reason: 'The parcel arrived crushed.' }]);

      // Nobody answers: the mock's clock jumps past the deadline and the bot's timeout ends it.
      await w.say('refund, again');
      const late = await newestPending(w.page);
      await w.mock.clock.advance(10 * 60 + 1);
      await w.bot.fireDueQuestions(); // what the bot's own timer does within a second
      await questionIs(w.page, late, 'timed_out');
      expect(await buttonsDisabled(w.page, late)).toEqual([true, true]);
      await w.message('No answer, so order o_42 was not refunded.').waitFor();
      expect(await w.page.locator(`.msg[data-message-id="${late}"] .question`).textContent()).toBe(
        'timed out',
      );

      // /cancel reaches its command and ends the question; the page shows it cancelled.
      await w.say('please refund it');
      const cancelled = await newestPending(w.page);
      await w.say('/cancel');
      await questionIs(w.page, cancelled, 'cancelled');
      expect(await buttonsDisabled(w.page, cancelled)).toEqual([true, true]);
      expect(w.refunded).toHaveLength(1);
      expect(w.pageErrors).toEqual([]);
    },
    WAIT_MS * 4,
  );
});
