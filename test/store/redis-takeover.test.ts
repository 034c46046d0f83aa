// A bot process SIGKILLed mid-reply, with every timing default, on a real redis-server, through the
// mock (served on a loopback port) in real time: the service's first retry, 5 s after the failed
// delivery, reaches another instance, which finds the dead one's claim, lock and writer lease expired,
// runs the message, ends the frozen streaming reply marked and answers once in a new message. With
// a claim that outlived that retry, the retry was answered 409 and the message waited 5 minutes.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { AgentClient, createBot } from 'agent-messaging';
import { createRedisStore } from 'agent-messaging/redis';
import { createMockService } from 'agent-messaging/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { connectClient, redisForFile, uniquePrefix } from './redis-server.js';

const redis = redisForFile();
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Starts test/store/streaming-bot-process.ts; resolves with its port and a wait for its next stdout line. */
function startBotProcess(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/store/streaming-bot-process.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let output = '';
  const waiters: (() => void)[] = [];
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    for (const wake of waiters.splice(0)) wake();
  });
  const line = async (pattern: RegExp) => {
    for (;;) {
      const match = pattern.exec(output);
      if (match) return match;
      if (child.exitCode !== null) throw new Error(`the bot process exited (${child.exitCode}): ${output}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { child, line };
}

describe('an instance SIGKILLed mid-reply, default TTLs (Redis store)', () => {
  it("is taken over by the service's first retry: the cut reply ended marked, the answer sent once", async () => {
    const prefix = uniquePrefix('takeover');
    let forward: (request: Request) => Promise<Response> = async () => new Response(null, { status: 204 });
    const mock = createMockService({ fetch: (request) => forward(request) });
    const server = await mock.listen({ port: 0 });
    try {
      const seed = await mock.seed();
      const doomed = startBotProcess({
        REDIS_URL: redis.server.url,
        BOT_PREFIX: prefix,
        BOT_API_KEY: seed.apiKey,
        BOT_WEBHOOK_SECRET: seed.webhookSecret,
        BOT_BASE_URL: server.baseUrl,
      });
      const port = Number((await doomed.line(/ready (\d+)/))[1]);

      // The other instance, in this process, on its own connection to the same Redis.
      const client = await connectClient(redis.server.url);
      const store = createRedisStore({ client, prefix });
      redis.cleanups.push(async () => {
        await store.close();
        client.destroy();
      });
      const survivor = createBot({
        apiKey: seed.apiKey,
        webhookSecret: seed.webhookSecret,
        baseUrl: server.baseUrl,
        store,
      });
      const ran: string[] = [];
      survivor.on('message.received', async (ctx) => {
        ran.push(ctx.text);
        await ctx.reply(['Re: ', 'the whole answer']);
      });

      // The first delivery goes to the process (its connection dies with it); the retries to the survivor.
      let delivered = 0;
      forward = (request) =>
        ++delivered === 1 ? fetch(`http://127.0.0.1:${port}/`, request) : survivor.fetch(request);
      const agent = new AgentClient({ apiKey: seed.apiKey, baseUrl: server.baseUrl });
      const agentMessages = async () => {
        const { messages } = await agent.conversations.listMessages(seed.conversationId, { limit: 20 });
        return messages
          .filter((message) => message.sender.id === seed.agent.id)
          .reverse()
          .map((message) => ({
            status: message.status,
            text: message.parts?.find((part) => part.type === 'text')?.text,
          }));
      };

      mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text: 'hello' });
      await doomed.line(/streaming/);
      // What the user sees: a reply frozen mid-stream.
      await expect.poll(agentMessages, { timeout: 10_000 }).toEqual([{ status: 'streaming', text: 'Re: ' }]);
      const exited = once(doomed.child, 'exit');
      doomed.child.kill('SIGKILL');
      await exited;

      // The first attempt failed with the connection; the retry 5 s later ran it (not a 409).
      const attempts = () =>
        mock.deliveries.filter((delivery) => delivery.type === 'message.received').map((d) => d.status);
      await expect.poll(attempts, { timeout: 20_000, interval: 100 }).toEqual([null, 200]);
      await survivor.idle();
      expect(ran).toEqual(['hello']);
      expect(await agentMessages()).toEqual([
        { status: 'sent', text: 'Re: … [interrupted]' },
        { status: 'sent', text: 'Re: the whole answer' },
      ]);
    } finally {
      await server.close();
    }
  }, 40_000);
});
