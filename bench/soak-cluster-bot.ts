// One bot process of `npm run soak:cluster`: createBot with the Redis store, served by toNodeHandler
// on a loopback port it prints as `ready PORT`. Each handler streams a reply of known text (see
// replyText). The process logs to its stdout, one `log {json}` line each, when a delivery reaches it
// and is answered and when a handler starts, is stopped (its signal fired) and ends, so the parent can
// prove that no two handlers of one conversation ever ran at once, across processes, and tell when each
// message reached a bot; the log goes around the store, which the soak's faults stop, pause and cut. It
// also asks and times out the questions of the soak's questions part. The parent SIGKILLs it, pauses
// it, or sends it SIGTERM, which it answers as docs/bot.md shows: stop listening, `bot.close`, exit.
import { createServer } from 'node:http';
import { createClient } from 'redis';
import { createBot } from '../src/index.js';
import { toNodeHandler } from '../src/node.js';
import { createRedisStore } from '../src/redis/index.js';

/** The full text of the reply to the user message `text`, in the chunks a handler streams. */
export function replyChunks(text: string): string[] {
  return [`re ${text}:`, ...Array.from({ length: 7 }, (_, i) => ` w${i}`)];
}

/** The deadline the SIGTERM handler gives `bot.close` (under Kubernetes' 30 s grace period). */
export const CLOSE_DEADLINE_MS = 20_000;

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`soak-cluster-bot: ${name} is not set`);
  return value;
};
/** An optional number from the environment: unset leaves the SDK's default. */
const optional = (name: string) => (process.env[name] ? Number(process.env[name]) : undefined);

const log = (event: string, fields: Record<string, unknown>) =>
  // Synchronous on a pipe (Linux): the line is out before the step it records goes on.
  process.stdout.write(`log ${JSON.stringify({ event, ...fields, pid: process.pid, at: Date.now() })}\n`);

async function main() {
  const prefix = env('SOAK_PREFIX');
  const client = createClient({ url: env('REDIS_URL') });
  client.on('error', () => {}); // reconnects are node-redis's; the store reports what failed
  await client.connect();
  const lockTtlMs = optional('SOAK_LOCK_TTL_MS');
  const chunkMs = optional('SOAK_CHUNK_MS') ?? 8;
  const bot = createBot({
    apiKey: env('SOAK_API_KEY'),
    webhookSecret: env('SOAK_WEBHOOK_SECRET'),
    baseUrl: env('SOAK_BASE_URL'),
    store: createRedisStore({ client, prefix }),
    concurrency: 'queue',
    // Unset (the fault rows), the SDK's defaults; the SIGKILL chaos part moves on after two seconds.
    lockTtlMs,
    maxHandlerMs: optional('SOAK_MAX_HANDLER_MS'),
    logger: (message, fields) => {
      // A message the bot stopped trying is reported (MessageGivenUpError): the soak tells it from a lost one.
      const { error, webhookId } = (fields ?? {}) as { error?: unknown; webhookId?: unknown };
      if (String(error).startsWith('MessageGivenUpError')) log('given up', { webhookId });
      // SOAK_VERBOSE (with AGENT_MESSAGING_DEBUG=1 for each step of a delivery): one line per entry.
      if (process.env.SOAK_VERBOSE) {
        const line = Object.entries((fields ?? {}) as Record<string, unknown>).map(
          ([key, value]) =>
            `${key}=${value instanceof Error ? `${value.name}: ${value.message}` : String(value)}`,
        );
        console.error(`${Date.now()} [bot ${process.pid}] ${message} ${line.join(' ')}`);
      }
      // SOAK_ERRORS: one line per bot error (what failed handlers and store calls said).
      else if (process.env.SOAK_ERRORS && (fields as { level?: string }).level === 'error') {
        console.error(`[bot ${process.pid}] ${message}: ${String((fields as { error?: unknown }).error)}`);
      }
    },
  });
  let runs = 0;

  bot.on('message.received', async (ctx) => {
    const run = ++runs;
    const at = { run, conversationId: ctx.conversationId, text: ctx.text };
    log('start', at);
    ctx.signal.addEventListener('abort', () => log('stopped', { ...at, reason: ctx.signal.reason?.name }));
    const chunks = replyChunks(ctx.text);
    async function* stream() {
      for (const chunk of chunks) {
        await new Promise((resolve) => setTimeout(resolve, chunkMs));
        yield chunk;
      }
    }
    try {
      // The reply's writer lease lives as long as the conversation's lock: the next holder of a killed
      // one's conversation finds the dead writer's lease gone too (or waits it out, writerWaitMs).
      await ctx.reply(stream(), lockTtlMs ? { writerLeaseMs: lockTtlMs } : {});
    } finally {
      // A handler that threw has ended too (its delivery is retried): only a kill leaves a run open.
      log('end', at);
    }
  });

  // The questions part (soak-cluster/questions.ts): 'ask qN' asks, a click answers, the timer times out.
  bot.question('soak-confirm', {
    choices: ['yes'],
    timeoutMs: Number(process.env.SOAK_QUESTION_TIMEOUT_MS ?? 4000),
    onAnswer: async (ctx, _answer, state) => {
      log('answered', { run: ++runs, conversationId: ctx.conversationId, text: String(state.q) });
      await ctx.reply(`answered ${state.q}`);
    },
    onTimeout: async (ctx, state) => {
      log('timed out', { run: ++runs, conversationId: ctx.conversationId, text: String(state.q) });
      await ctx.reply(`timed out ${state.q}`);
    },
  });
  bot.hears(/^ask (q\d+)$/, (ctx) =>
    ctx.ask('soak-confirm', `question ${ctx.match?.[1]}`, {
      state: { q: ctx.match?.[1] },
      quickReplies: [{ actionId: 'yes', label: 'Yes' }],
    }),
  );

  const handle = toNodeHandler(bot);
  const server = createServer((request, response) => {
    const webhookId = request.headers['webhook-id'];
    log('received', { webhookId });
    response.on('finish', () => log('responded', { webhookId, status: response.statusCode }));
    return handle(request, response);
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (typeof address === 'object' && address) process.stdout.write(`ready ${address.port}\n`);
  });
  // As docs/bot.md wires it: no new connections, finish what runs, hand the rest on, exit.
  process.once('SIGTERM', async () => {
    log('closing', {});
    server.close();
    await bot.close({ deadline: CLOSE_DEADLINE_MS });
    log('closed', {});
    process.exit(0);
  });
}

if (process.argv[1]?.endsWith('soak-cluster-bot.ts')) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
