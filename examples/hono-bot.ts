// Run: `npm run mock` in one terminal, then `npx tsx examples/hono-bot.ts` (PORT=3000 by default).
//
// The bot inside a Hono app. `bot.fetch` takes a Web-standard Request and answers a Response, so it
// mounts on any Web-standard framework or runtime as it is: hand it the raw request, unparsed, since
// the signature covers the exact bytes.

import { once } from 'node:events';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { type Bot, type BotOptions, createBot } from 'agent-messaging';
import { toNodeFetchHandler } from 'agent-messaging/node';
import { Hono } from 'hono';
import { chatOnMock, credentialsFromEnv, webhookUrl } from './support/try-on-mock.js';

/** An echo bot: every message gets "You said: <text>" back. */
export function createEchoBot(options: BotOptions): Bot {
  return createBot(options).on('message.received', (ctx) => ctx.reply(`You said: ${ctx.text}`));
}

/** A Hono app with the bot on POST /webhook, next to the app's own routes. */
export function createApp(bot: Bot): Hono {
  const app = new Hono();
  app.get('/', (c) => c.text('ok'));
  app.post('/webhook', (c) => bot.fetch(c.req.raw));
  // On Workers, also pass the execution context: its waitUntil keeps a handler that outlives an early
  // answer alive. (Hono throws when asked for one that does not exist, as on Node.)
  //   app.post('/webhook', (c) => bot.fetch(c.req.raw, c.env, c.executionCtx));
  return app;
}

// The app is a fetch handler on every runtime: `export default app` on Workers and Bun,
// `Deno.serve(app.fetch)` on Deno. On Node, toNodeFetchHandler serves it (so does @hono/node-server).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const agent = await credentialsFromEnv('hono_echo');
  const bot = createEchoBot(agent);
  const app = createApp(bot);
  const server = createServer(toNodeFetchHandler({ fetch: async (request) => app.fetch(request) }));
  server.listen(Number(process.env.PORT ?? 3000));
  await once(server, 'listening');
  console.log(`Hono bot listening: POST ${webhookUrl(server)}`);
  await chatOnMock(bot.client, agent, webhookUrl(server), 'Hello, Hono!');
}
