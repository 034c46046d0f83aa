// One bot process of `npm run soak:cluster`: createBot with the Redis store, served by toNodeHandler
// on a loopback port it prints as `ready PORT`. Each handler streams a reply of known text (see
// replyText) and logs its start and end to a Redis list, so the parent can prove that no two handlers
// of one conversation ever ran at once, across processes. It also asks and times out the questions of
// the soak's questions part. The parent SIGKILLs it at random.
import { createServer } from 'node:http';
import { createClient } from 'redis';
import { createBot } from '../src/index.js';
import { toNodeHandler } from '../src/node.js';
import { createRedisStore } from '../src/redis/index.js';

/** The full text of the reply to the user message `text`, in the chunks a handler streams. */
export function replyChunks(text: string): string[] {
  return [`re ${text}:`, ...Array.from({ length: 7 }, (_, i) => ` w${i}`)];
}

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`soak-cluster-bot: ${name} is not set`);
  return value;
};

async function main() {
  const prefix = env('SOAK_PREFIX');
  const logKey = `${prefix}soak:log`;
  const client = createClient({ url: env('REDIS_URL') });
  client.on('error', () => {}); // the soak cuts nothing on the Redis side; reconnects are node-redis's
  await client.connect();
  const lockTtlMs = Number(process.env.SOAK_LOCK_TTL_MS ?? 2000);
  const bot = createBot({
    apiKey: env('SOAK_API_KEY'),
    webhookSecret: env('SOAK_WEBHOOK_SECRET'),
    baseUrl: env('SOAK_BASE_URL'),
    store: createRedisStore({ client, prefix }),
    concurrency: 'queue',
    // A killed holder's conversation moves on after two seconds, not the default thirty.
    lockTtlMs,
    maxHandlerMs: 20_000,
    logger: (message, fields) => {
      if (process.env.SOAK_VERBOSE) console.error(`[bot ${process.pid}] ${message}`, fields);
      // SOAK_ERRORS: one line per bot error (what failed handlers and store calls said).
      else if (process.env.SOAK_ERRORS && (fields as { level?: string }).level === 'error') {
        console.error(`[bot ${process.pid}] ${message}: ${String((fields as { error?: unknown }).error)}`);
      }
    },
  });
  let runs = 0;
  const log = (event: string, run: number, conversationId: string, text: string) =>
    client.rPush(
      logKey,
      JSON.stringify({ event, run, conversationId, text, pid: process.pid, at: Date.now() }),
    );

  bot.on('message.received', async (ctx) => {
    const run = ++runs;
    await log('start', run, ctx.conversationId, ctx.text);
    const chunks = replyChunks(ctx.text);
    async function* stream() {
      for (const chunk of chunks) {
        await new Promise((resolve) => setTimeout(resolve, 8));
        yield chunk;
      }
    }
    try {
      // The reply's writer lease lives as long as the conversation's lock: the next holder of a killed
      // one's conversation finds the dead writer's lease gone too (or waits it out, writerWaitMs).
      await ctx.reply(stream(), { writerLeaseMs: lockTtlMs });
    } finally {
      // A handler that threw has ended too (its delivery is retried): only a kill leaves a run open.
      await log('end', run, ctx.conversationId, ctx.text);
    }
  });

  // The questions part (soak-cluster/questions.ts): 'ask qN' asks, a click answers, the timer times out.
  bot.question('soak-confirm', {
    choices: ['yes'],
    timeoutMs: Number(process.env.SOAK_QUESTION_TIMEOUT_MS ?? 4000),
    onAnswer: async (ctx, _answer, state) => {
      await log('answered', ++runs, ctx.conversationId, String(state.q));
      await ctx.reply(`answered ${state.q}`);
    },
    onTimeout: async (ctx, state) => {
      await log('timed out', ++runs, ctx.conversationId, String(state.q));
      await ctx.reply(`timed out ${state.q}`);
    },
  });
  bot.hears(/^ask (q\d+)$/, (ctx) =>
    ctx.ask('soak-confirm', `question ${ctx.match?.[1]}`, {
      state: { q: ctx.match?.[1] },
      quickReplies: [{ actionId: 'yes', label: 'Yes' }],
    }),
  );

  const server = createServer(toNodeHandler(bot));
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (typeof address === 'object' && address) process.stdout.write(`ready ${address.port}\n`);
  });
}

if (process.argv[1]?.endsWith('soak-cluster-bot.ts')) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
