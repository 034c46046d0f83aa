// Run: `npm run mock` in one terminal, then `npx tsx examples/echo-bot.ts` (PORT=3000 by default).
//
// An echo bot on plain node:http. `createBot` verifies each webhook delivery, drops duplicates and
// answers the service; `toNodeHandler` reads the raw body Node hands it, since the signature covers
// the exact bytes. With AMS_API_KEY and AMS_WEBHOOK_SECRET set it serves that agent; without them it
// registers a throwaway agent on the mock and plays a user who says hello.

import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { type Bot, type BotOptions, createBot } from 'agent-messaging';
import { toNodeHandler } from 'agent-messaging/node';
import { chatOnMock, credentialsFromEnv, webhookUrl } from './support/try-on-mock.js';

/** A bot that answers every message with "You said: <text>". */
export function createEchoBot(options: BotOptions): Bot {
  const bot = createBot(options);
  // A returned promise is awaited before the delivery is answered; a throw makes the service retry,
  // and the retry's reply replays the first one (same Idempotency-Key) instead of posting twice.
  bot.on('message.received', (ctx) => ctx.reply(`You said: ${ctx.text}`));
  return bot;
}

/** Serves a bot on node:http at `port` (0 picks a free one); resolves once it listens. */
export async function serveBot(bot: Bot, port: number, host?: string): Promise<Server> {
  // Every path is the webhook here; route it yourself if the server does more.
  const server = createServer(toNodeHandler(bot));
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const agent = await credentialsFromEnv('echo');
  const bot = createEchoBot(agent);
  const server = await serveBot(bot, Number(process.env.PORT ?? 3000));
  // A deploy's SIGTERM: no new connections, the running reply finishes, the rest goes to the retries.
  process.once('SIGTERM', async () => {
    server.close();
    await bot.close({ deadline: 20_000 });
    process.exit(0);
  });
  console.log(`Echo bot listening: POST ${webhookUrl(server)}`);
  await chatOnMock(bot.client, agent, webhookUrl(server), 'Hello, bot!');
}
