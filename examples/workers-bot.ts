// Run: `npm run mock` in one terminal, then `npx tsx examples/workers-bot.ts` (PORT=3000 by default).
// Deploy: `wrangler secret put AMS_API_KEY` and `AMS_WEBHOOK_SECRET`, AMS_BASE_URL under [vars], then
// `wrangler deploy`. The Worker is the default export; the local runner at the bottom imports node
// modules, so keep it out of your Worker or deploy with compatibility_flags = ["nodejs_compat"].
//
// The bot as a Cloudflare Worker (the same module shape serves Bun and Deno Deploy). Secrets arrive as
// env bindings on each request, so the bot is built on the first request and reused by the isolate.
// It answers each delivery at once (202) and finishes the reply under `ctx.waitUntil`.

import { once } from 'node:events';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { type Bot, createBot, type WaitUntil } from 'agent-messaging';
import { toNodeFetchHandler } from 'agent-messaging/node';
import { chatOnMock, credentialsFromEnv, webhookUrl } from './support/try-on-mock.js';

/** The Worker's bindings: two secrets and the service's address. */
export interface Env {
  AMS_API_KEY: string;
  AMS_WEBHOOK_SECRET: string;
  AMS_BASE_URL: string;
}

/** The part of Workers' ExecutionContext the bot uses (`@cloudflare/workers-types` has the whole). */
export interface ExecutionContext {
  waitUntil: WaitUntil;
}

/** The bot, from the Worker's bindings. */
export function createWorkerBot(env: Env): Bot {
  return createBot({
    apiKey: env.AMS_API_KEY,
    webhookSecret: env.AMS_WEBHOOK_SECRET,
    baseUrl: env.AMS_BASE_URL,
    // A Worker may not outlive its response without waitUntil: answer at once, reply under waitUntil.
    ack: 'immediately',
  }).on('message.received', (ctx) => ctx.reply(`You said: ${ctx.text}`));
}

// One bot per isolate. Its memory of handled deliveries is per isolate too; a Durable Object as the
// `dedupe` store shares it. Replies are never doubled either way: their Idempotency-Key comes from the
// webhook id.
let bot: Bot | undefined;

/** The Worker: `export default { fetch }`. */
export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    bot ??= createWorkerBot(env);
    return bot.fetch(request, env, ctx);
  },
};

// On Node, the same bot behind node:http, with waitUntil as a no-op: the process stays alive anyway.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const agent = await credentialsFromEnv('worker_echo');
  const env: Env = {
    AMS_API_KEY: agent.apiKey,
    AMS_WEBHOOK_SECRET: agent.webhookSecret,
    AMS_BASE_URL: agent.baseUrl,
  };
  const local = createWorkerBot(env);
  const ctx: ExecutionContext = { waitUntil: () => {} };
  const server = createServer(toNodeFetchHandler({ fetch: (request) => local.fetch(request, env, ctx) }));
  server.listen(Number(process.env.PORT ?? 3000));
  await once(server, 'listening');
  console.log(`Worker bot listening: POST ${webhookUrl(server)}`);
  await chatOnMock(local.client, agent, webhookUrl(server), 'Hello, Worker!');
}
