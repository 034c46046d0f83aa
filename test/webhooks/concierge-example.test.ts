// examples/concierge-bot.ts, the runnable example of docs/bot.md, against the mock with real signed
// deliveries: commands, a menu whose click is routed, a file, sessions, and an interrupted answer.
import { describe, expect, it } from 'vitest';
import { createConciergeBot } from '../../examples/concierge-bot.js';
import { createLoop } from './harness.js';

describe('examples/concierge-bot.ts', () => {
  it("routes, clicks, files and keeps each conversation's visits", async () => {
    const loop = await createLoop();
    const bot = createConciergeBot(
      { apiKey: loop.apiKey, webhookSecret: loop.secret, ...loop.connection },
      async () => undefined,
    );
    loop.route((request) => bot.fetch(request));
    await loop.post('/help');
    await loop.post('menu');
    const menu = (await loop.agentMessages()).at(-1);
    expect(menu?.parts?.map((p) => p.type)).toEqual(['text', 'actions']);
    loop.mock.clickAction({
      conversation_id: loop.conversationId,
      user_id: loop.user.id,
      message_id: menu?.id ?? '',
      action_id: 'tea',
    });
    await loop.mock.idle();
    await loop.post('/report');
    await bot.idle();
    const texts = (await loop.agentMessages()).map((m) => m.fallback_text);
    expect(texts).toEqual([
      'Say "menu" for choices, "/report" for a file, or ask anything.',
      'What would you like?',
      'One tea, coming up.',
      'Your report',
    ]);
    const report = (await loop.agentMessages()).at(-1);
    expect(report?.parts?.map((p) => p.type)).toEqual(['text', 'file']);
    // Four messages so far in this conversation, counted by the middleware in the session.
    const attachment = loop.mock
      .snapshot()
      .attachments.find((a) => a.id === report?.parts?.[1]?.attachment_id);
    expect(attachment).toMatchObject({
      name: 'report.csv',
      mime_type: 'text/csv',
      size_bytes: 'visits,4\n'.length,
    });
  });

  it('interrupts the answer still streaming when a newer message comes', async () => {
    const loop = await createLoop();
    let firstStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      firstStarted = resolve;
    });
    // The first answer thinks until it is interrupted; the others answer at once.
    const pace = (text: string, signal: AbortSignal) =>
      text === 'first question'
        ? new Promise<void>((resolve) => {
            firstStarted();
            signal.addEventListener('abort', () => resolve());
          })
        : Promise.resolve();
    const bot = createConciergeBot(
      { apiKey: loop.apiKey, webhookSecret: loop.secret, ...loop.connection },
      pace,
    );
    loop.route((request) => bot.fetch(request));
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'first question' });
    await started;
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'second' });
    await loop.mock.idle();
    await bot.idle();
    const [first, second] = await loop.agentMessages();
    expect(first?.fallback_text).toMatch(/ … \[interrupted\]$/);
    expect(second?.fallback_text).toBe('Let me think about "second" carefully before I answer. ');
  });
});
