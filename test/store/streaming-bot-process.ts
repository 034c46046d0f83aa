// A bot process for redis-takeover.test.ts: createBot on the Redis store with every timing default
// (lockTtlMs, the writer lease), served by toNodeHandler on a loopback port it prints as `ready PORT`.
// Its handler streams "Re: " and then never goes on, printing `streaming` once that chunk was handed
// to the reply: the test SIGKILLs the process there, mid-reply.
import { createServer } from 'node:http';
import { createClient } from 'redis';
import { createBot } from '../../src/index.js';
import { toNodeHandler } from '../../src/node.js';
import { createRedisStore } from '../../src/redis/index.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`streaming-bot-process: ${name} is not set`);
  return value;
};

const client = createClient({ url: env('REDIS_URL') });
client.on('error', () => {});
await client.connect();
const bot = createBot({
  apiKey: env('BOT_API_KEY'),
  webhookSecret: env('BOT_WEBHOOK_SECRET'),
  baseUrl: env('BOT_BASE_URL'),
  store: createRedisStore({ client, prefix: env('BOT_PREFIX') }),
});
bot.on('message.received', async (ctx) => {
  async function* frozen() {
    yield 'Re: ';
    process.stdout.write('streaming\n');
    await new Promise(() => {});
  }
  await ctx.reply(frozen());
});
const server = createServer(toNodeHandler(bot));
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address) process.stdout.write(`ready ${address.port}\n`);
});
