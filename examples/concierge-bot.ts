// Run: `npm run mock` in one terminal, then `npx tsx examples/concierge-bot.ts` (PORT=3000 by default).
//
// A bot with the conversation runtime: a newer message interrupts the answer still streaming, commands
// and words are routed, a menu of quick replies comes back as clicks, a file is sent, and each
// conversation keeps a little state. Every feature of docs/bot.md in one place.

import { fileURLToPath } from 'node:url';
import { type Bot, type BotOptions, createBot, type MessageContext } from 'agent-messaging';
import { serveBot } from './echo-bot.js';
import { chatOnMock, credentialsFromEnv, webhookUrl } from './support/try-on-mock.js';

/** Waits between two words of an answer; the default is a model's pace, a test passes its own. */
export type Pace = (text: string, signal: AbortSignal) => Promise<void>;

const modelPace: Pace = (_text, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, 150);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** A slow "model": words one by one, stopping as soon as `signal` fires. */
async function* thinkAloud(text: string, signal: AbortSignal, pace: Pace): AsyncGenerator<string> {
  for (const word of `Let me think about "${text}" carefully before I answer.`.split(' ')) {
    if (signal.aborted) return;
    yield `${word} `;
    await pace(text, signal);
  }
}

/** The concierge bot. */
export function createConciergeBot(options: BotOptions, pace: Pace = modelPace): Bot {
  const bot = createBot({
    concurrency: 'interrupt',
    session: { initial: () => ({ visits: 0 }) },
    ...options,
  });

  bot.use(async (ctx, next) => {
    // Count every message of the conversation, whatever route takes it.
    const message = ctx as MessageContext;
    if (message.session) message.session.visits = Number(message.session.visits) + 1;
    await next();
  });
  bot.command('/help', (ctx) => ctx.reply('Say "menu" for choices, "/report" for a file, or ask anything.'));
  bot.command('/report', (ctx) =>
    ctx.replyWithFile(new TextEncoder().encode(`visits,${ctx.session.visits}\n`), {
      name: 'report.csv',
      mime_type: 'text/csv',
      caption: 'Your report',
    }),
  );
  bot.hears(/^menu$/i, (ctx) =>
    ctx.reply('What would you like?', {
      quickReplies: [
        { actionId: 'coffee', label: 'Coffee', value: 'order:coffee' },
        { actionId: 'tea', label: 'Tea', value: 'order:tea' },
      ],
    }),
  );
  bot.action(/^order:/, (ctx) => {
    ctx.session.order = ctx.action?.value.slice('order:'.length);
    return ctx.reply(`One ${ctx.session.order}, coming up.`);
  });
  bot.on('mention', (ctx) => ctx.reply('You called? Say /help.'));
  // Anything else: a streamed answer that a newer message interrupts (marked " … [interrupted]").
  bot.on('message.received', (ctx) => ctx.reply(thinkAloud(ctx.text, ctx.signal, pace)));
  return bot;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const agent = await credentialsFromEnv('concierge');
  const bot = createConciergeBot(agent);
  const server = await serveBot(bot, Number(process.env.PORT ?? 3000));
  console.log(`Concierge bot listening: POST ${webhookUrl(server)}`);
  await chatOnMock(bot.client, agent, webhookUrl(server), 'menu');
}
