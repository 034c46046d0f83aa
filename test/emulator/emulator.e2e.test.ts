// The emulator end to end, in a real browser: the mock on a real port, a real bot on another, and
// headless Chromium using the page as a person would. Each step is checked on the page and in
// what went over the wire (the mock's request log, its state, and what the bot received).

import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentClient, ApiError, registerAgent } from 'agent-messaging';
import { createMockService, type MockServer, type MockService } from 'agent-messaging/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './browser.js';
import { DELIVERED_ONLY, type EmulatorBot, Gate, NOTES, PHOTO, startEmulatorBot } from './emulator-bot.js';
import { pageActions } from './page-actions.js';

// EMULATOR_SCREENSHOT=docs/emulator.png refreshes the README's picture.
const SCREENSHOT = process.env.EMULATOR_SCREENSHOT ?? join(tmpdir(), 'ams-emulator.png');

// Every wait on the page waits for something to appear, never for a time to pass, so a generous
// bound only matters on a slow machine: one step once took longer than playwright's default 30 s
// on a loaded one (load 4.5 on 2 cores). The test's own bound covers its whole run.
const WAIT_MS = 120_000;
const TEST_MS = 600_000;

let mock: MockService;
let server: MockServer;
let bot: EmulatorBot;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  mock = createMockService();
  server = await mock.listen({ port: 0 });
  bot = await startEmulatorBot(server.baseUrl);
}, WAIT_MS);

/** Opens the browser inside the test, so a missing Chromium fails the test instead of skipping it. */
async function openPage(): Promise<void> {
  browser = await launchChromium();
  browser.context.setDefaultTimeout(WAIT_MS);
  browser.context.setDefaultNavigationTimeout(WAIT_MS);
  page = await browser.context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
}

afterAll(async () => {
  await browser?.close();
  await bot?.close();
  await server?.close();
}, WAIT_MS);

const userId = (name: string) => mock.snapshot().users.find((user) => user.display_name === name)?.id ?? '';

describe('the emulator page', () => {
  it(
    'lets a person chat with a bot: streamed reply, receipts, quick reply, consent card, files, logs, clock, reset',
    async () => {
      await openPage();
      const { message, conversationButton, createUser, install, say } = pageActions(page);
      await page.goto(`${server.baseUrl}/`);
      await page.locator('#connection[data-state="live"]').waitFor();
      // The agent registered and verified before the page opened is in its first paint.
      await page.locator('#agents .entity', { hasText: 'Helper' }).locator('.badge-active').waitFor();

      // Users and installs, made on the page.
      await createUser('Grace');
      await createUser('Ada');
      expect(mock.snapshot().users.map((user) => user.display_name)).toEqual(['Grace', 'Ada']);
      bot.groupUsers.push(userId('Ada'), userId('Grace'));
      await install('Grace');
      await install('Ada');
      expect(mock.snapshot().users.find((user) => user.display_name === 'Ada')?.installs).toEqual([
        bot.agentId,
      ]);

      // A message as Ada: the bot reads it and types.
      await say('hello bot');
      await message('hello bot').and(page.locator('.from-user')).locator('.receipt.read').waitFor();
      await page.locator('#typing', { hasText: 'Helper is typing…' }).waitFor();

      // The reply streams: first what the bot wrote so far, still streaming...
      bot.startStreaming.open();
      const reply = page.locator('.msg.from-agent').filter({ hasText: 'Echo: hello bot' });
      await reply.and(page.locator('[data-status="streaming"]')).waitFor();
      expect(await reply.locator('.part-text').innerText()).toBe('Echo: hello bot');
      await page.locator('#typing').waitFor({ state: 'hidden' });
      // ...then the rest, and it completes in place.
      bot.finishStreaming.open();
      await reply.and(page.locator('[data-status="sent"]')).waitFor();
      expect(await reply.locator('.part-text').innerText()).toBe('Echo: hello bot, streamed word by word.');
      expect(await reply.locator('.caret').count()).toBe(0);
      expect(await page.locator('.msg.from-agent').count()).toBeGreaterThanOrEqual(1);
      const streamed = mock
        .snapshot()
        .conversations.flatMap((c) => c.messages)
        .find((m) => m.revision);
      expect(streamed).toMatchObject({
        status: 'sent',
        parts: [{ text: 'Echo: hello bot, streamed word by word.' }],
      });

      // Quick replies, with the fallback text shown beside them. A click is a real click (PROTOCOL.md
      // section 14): the mock posts the label as Ada's reply to the question, and the bot's delivery
      // carries the postback (action id, value, message), which the bot answers.
      const question = message('Did that help?');
      await question.getByRole('button', { name: 'Yes, thanks' }).waitFor();
      expect(await question.locator('.fallback').innerText()).toContain('Did that help? Reply yes or more.');
      const questionId = (await question.getAttribute('data-message-id')) ?? '';
      await question.getByRole('button', { name: 'Yes, thanks' }).click();
      await message('Glad it helped!').waitFor();
      const picked = message('Yes, thanks').and(page.locator('.from-user'));
      await picked.locator('.reaction', { hasText: '👍' }).waitFor();
      expect(bot.received).toEqual(['hello bot', 'Yes, thanks']);
      // The bot's bot.action('yes') route took the click, with what the delivery's postback said.
      expect(bot.postbacks).toEqual([{ actionId: 'yes', value: 'pick:yes', messageId: questionId }]);
      const adaConversation = mock
        .snapshot()
        .conversations.find((c) => c.participants.some((p) => p.display_name === 'Ada'));
      const adaMessages = adaConversation?.messages.filter((m) => m.sender.id === userId('Ada'));
      expect(adaMessages?.map((m) => [m.parts?.[0]?.text, m.reply_to ?? null])).toEqual([
        ['hello bot', null],
        ['Yes, thanks', { message_id: questionId, part_index: 1 }],
      ]);

      // A group: the bot invites both users; each accepts on the consent card in Ada's conversation.
      await say('group');
      const card = page.locator('.consent');
      await card.getByRole('button', { name: 'Accept as Ada' }).click();
      await card.locator('.consent-member.accepted', { hasText: 'Ada' }).waitFor();
      await card.getByRole('button', { name: 'Accept as Grace' }).click();
      await page.locator('.consent[data-invite-status="completed"]').waitFor();
      await conversationButton('Trip planning').waitFor();
      const accepts = mock.requests.filter((r) => /^\/v1\/groups\/invites\/inv_[^/]+\/accept$/.test(r.path));
      expect(accepts.map((r) => [r.method, r.headers.authorization])).toEqual([
        ['POST', 'Bearer ***'],
        ['POST', 'Bearer ***'],
      ]);
      const group = mock.snapshot().conversations.find((c) => c.kind === 'group');
      expect(group?.participants.map((p) => p.display_name).sort()).toEqual(['Ada', 'Grace', 'Helper']);

      // In the group: a file to download, and a message the bot unsends.
      await card.getByRole('button', { name: /Open group/ }).click();
      await page.locator('#chat-title', { hasText: 'Trip planning' }).waitFor();
      await say('file');
      const link = message('Here are the notes.').getByRole('link', { name: /notes\.txt/ });
      await link.waitFor();
      const download = await fetch(new URL((await link.getAttribute('href')) ?? '', server.baseUrl));
      expect(await download.text()).toBe(NOTES);
      await say('oops');
      await page.locator('.msg.deleted.from-agent', { hasText: 'This message was unsent.' }).waitFor();
      expect(await message('Sent by mistake').count()).toBe(0);
      expect(mock.requests.filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual([
        expect.stringMatching(/^\/v1\/messages\/msg_/),
      ]);

      // A delivery that fails is retried when the clock moves on.
      await say('flaky');
      await page.locator('#deliveries tr[data-event-type="message.received"][data-status="500"]').waitFor();
      await page.getByRole('button', { name: '+1 h' }).click();
      await page.locator('#clock-offset', { hasText: '+1 h from real time' }).waitFor();
      expect(mock.clock.now().getTime() - Date.now()).toBeGreaterThan(3590_000);
      await message('Back on my feet after a retry.').waitFor();
      const flaky = mock.deliveries.filter((d) => d.type === 'message.received').slice(-2);
      expect(flaky.map((d) => [d.attempt, d.status !== null && d.status < 300])).toEqual([
        [1, false],
        [2, true],
      ]);
      expect(bot.events).toContain('invite.completed');
      expect(bot.errors).toEqual(['the first try fails on purpose']);

      // The picture for the README: back in Ada's conversation, a second reply caught mid-stream.
      await conversationButton('Ada · Helper').click();
      await page.locator('#chat-members', { hasText: 'Ada' }).waitFor();
      await page.setViewportSize({ width: 1440, height: 1000 });
      bot.startStreaming = new Gate();
      bot.finishStreaming = new Gate();
      bot.startStreaming.open();
      await say('What should we pack?');
      const packing = page.locator('.msg.from-agent').filter({ hasText: 'Echo: What should we pack?' });
      await packing.and(page.locator('[data-status="streaming"]')).locator('.caret').waitFor();
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      await page.screenshot({ path: SCREENSHOT });
      expect(statSync(SCREENSHOT).size).toBeGreaterThan(10_000);
      bot.finishStreaming.open();
      await packing.and(page.locator('[data-status="sent"]')).waitFor();

      // A message the bot marks delivered but does not read: "✓ Delivered", not "✓✓ Read".
      await say(DELIVERED_ONLY);
      const delivered = message(DELIVERED_ONLY).and(page.locator('.from-user'));
      await delivered.locator('.receipt', { hasText: '✓ Delivered' }).waitFor();
      expect(await delivered.locator('.receipt.read').count()).toBe(0);
      const deliveredId = (await delivered.getAttribute('data-message-id')) ?? '';
      const receipts = mock.requests.filter((r) => r.path.endsWith('/receipts'));
      expect(receipts.map((r) => JSON.parse(r.body ?? '{}'))).toEqual([
        { message_id: deliveredId, type: 'delivered' },
      ]);
      expect(mock.requests.filter((r) => r.path.endsWith('/read') && r.body?.includes(deliveredId))).toEqual(
        [],
      );

      // An image part: drawn from /_mock/files under the page's policy, its name not ASCII.
      await say('photo');
      const picture = message('A picture.').locator('img.part-image');
      await picture.waitFor();
      expect(await picture.getAttribute('alt')).toBe(PHOTO.name);
      // decode() rejects for an image the browser could not load (a 500, or one the policy blocked).
      const decodedWidth = await picture.evaluate(async (img: HTMLImageElement) => {
        await img.decode();
        return img.naturalWidth;
      });
      expect(decodedWidth).toBe(1);
      const photoLink = message('A picture.').getByRole('link', { name: PHOTO.name });
      const photo = await fetch(new URL((await photoLink.getAttribute('href')) ?? '', server.baseUrl));
      expect(photo.status).toBe(200);
      expect(photo.headers.get('content-disposition')).toContain(
        `filename*=UTF-8''${encodeURIComponent(PHOTO.name)}`,
      );
      expect(new Uint8Array(await photo.arrayBuffer())).toEqual(PHOTO.bytes);
      const photoMessage = mock
        .snapshot()
        .conversations.flatMap((c) => c.messages)
        .find((m) => m.parts?.some((part) => part.type === 'image'));
      expect(photoMessage?.parts?.map((part) => part.type)).toEqual(['text', 'image']);

      // The Requests tab: the /v1 log, each request opening on its headers and body, tokens hidden.
      await page.getByRole('tab', { name: /Requests/ }).click();
      await page.locator('#panel-requests').waitFor();
      const receiptRow = page.locator('#requests li[data-method="POST"]').filter({ hasText: '/receipts' });
      await receiptRow.locator('summary').click();
      const shown = await receiptRow.locator('pre.request-body').innerText();
      expect(shown).toContain('authorization: Bearer ***');
      expect(shown).toContain(`"message_id":"${deliveredId}"`);
      expect(shown).not.toMatch(/ams_sk_/);
      const unsendRow = page.locator('#requests li[data-method="DELETE"]');
      expect(await unsendRow.getAttribute('data-path')).toBe(
        mock.requests.find((r) => r.method === 'DELETE')?.path,
      );
      // Every /v1 request so far is in the tab (the page keeps the latest 300; this test makes fewer).
      await page.locator('#requests-count', { hasText: new RegExp(`^${mock.requests.length}$`) }).waitFor();
      await page.getByRole('tab', { name: /Webhook deliveries/ }).click();

      // A failing signature: an agent whose secret the bot does not hold points its webhook at the
      // bot; the bot answers 401 to the webhook.test, and the deliveries panel shows that row.
      const impostor = await registerAgent(
        { handle: 'impostor', display_name: 'Impostor', webhook_url: bot.webhookUrl, capabilities: ['text'] },
        { baseUrl: server.baseUrl },
      );
      const refused = await new AgentClient({ apiKey: impostor.api_key, baseUrl: server.baseUrl }).agents
        .setWebhook(impostor.agent.id, { webhook_url: bot.webhookUrl })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ApiError);
      expect(refused).toMatchObject({ status: 422, code: 'webhook_verification_failed' });
      const unsigned = page.locator('#deliveries tr[data-event-type="webhook.test"][data-status="401"]');
      await unsigned.waitFor();
      expect(await unsigned.locator('.error-line').innerText()).toBe('answered HTTP 401');
      expect(mock.deliveries.filter((d) => d.status === 401)).toEqual([
        expect.objectContaining({ type: 'webhook.test', url: bot.webhookUrl, attempt: 1 }),
      ]);
      await page.locator('#agents .entity', { hasText: 'Impostor' }).waitFor();
      expect(
        await page.locator('#agents .entity', { hasText: 'Impostor' }).locator('.badge-active').count(),
      ).toBe(0);

      // The clock refuses more than ten years at once, on the page before it asks the mock.
      await page.locator('#advance-seconds').fill('1e13');
      await page.getByRole('button', { name: 'Advance', exact: true }).click();
      await page.locator('#toast', { hasText: 'Seconds: a number from 0 to 315576000' }).waitFor();
      expect(await page.locator('#clock-offset').innerText()).toBe('+1 h from real time');
      expect(mock.clock.now().getTime() - Date.now()).toBeLessThan(2 * 3600_000);

      // Names and messages are text, never markup.
      const markup = '<img src=x onerror="window.pwned=1">';
      await createUser(markup);
      expect(await page.locator('#users img').count()).toBe(0);
      expect(await page.evaluate(() => 'pwned' in window)).toBe(false);

      // Reset, confirmed: the mock is empty and its clock is back to real time, on the page too.
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Reset' }).click();
      await page.locator('#agents .entity').first().waitFor({ state: 'detached' });
      await page.locator('#clock-offset', { hasText: /^real time$/ }).waitFor();
      expect(mock.snapshot()).toMatchObject({ agents: [], users: [], conversations: [] });
      expect(Math.abs(mock.clock.now().getTime() - Date.now())).toBeLessThan(3600_000);
      expect(pageErrors).toEqual([]);
    },
    TEST_MS,
  );
});
