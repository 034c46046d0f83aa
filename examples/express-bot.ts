// Run: `npm run mock` in one terminal, then `npx tsx examples/express-bot.ts` (PORT=3000 by default).
//
// The echo bot inside an Express 5 app. The one rule: the webhook route must get the raw bytes, so it
// is mounted with express.raw() and before express.json(); a parsed body can no longer be verified
// (the bot then answers 400 body_already_parsed, saying so).

import { once } from 'node:events';
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { type Bot, type BotOptions, createBot } from 'agent-messaging';
import { toNodeHandler } from 'agent-messaging/node';
import express, { type Express } from 'express';
import { chatOnMock, credentialsFromEnv, webhookUrl } from './support/try-on-mock.js';

/** The echo bot: every message gets "You said: <text>" back. */
export function createEchoBot(options: BotOptions): Bot {
  return createBot(options).on('message.received', (ctx) => ctx.reply(`You said: ${ctx.text}`));
}

/** An Express app with the bot on POST /webhook, next to the app's own JSON routes. */
export function createApp(bot: Bot): Express {
  const app = express();
  app.post('/webhook', express.raw({ type: 'application/json' }), toNodeHandler(bot));
  // The rest of the app parses JSON as usual: the webhook route above has already answered.
  app.use(express.json());
  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  return app;
}

/** Starts the app at `port` (0 picks a free one); resolves once it listens. */
export async function serveApp(app: Express, port: number, host?: string): Promise<Server> {
  const server = host === undefined ? app.listen(port) : app.listen(port, host);
  await once(server, 'listening');
  return server;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const agent = await credentialsFromEnv('express_echo');
  const bot = createEchoBot(agent);
  const server = await serveApp(createApp(bot), Number(process.env.PORT ?? 3000));
  console.log(`Express bot listening: POST ${webhookUrl(server)}`);
  await chatOnMock(bot.client, agent, webhookUrl(server), 'Hello, Express!');
}
