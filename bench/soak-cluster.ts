// `npm run soak:cluster` (`--ci`: the small one CI runs): three bot processes on one Redis store
// behind a round-robin loopback proxy, the loopback mock delivering to the proxy through a faulty
// network (answers lost, deliveries doubled, connections failed: the mock redelivers), while a chaos
// loop SIGKILLs a random bot every few seconds and starts a new one. Each handler streams a reply of
// known text. Then the questions part (soak-cluster/questions.ts): questions asked, half answered,
// half timing out, on the same bots under more kills. Counts every reply in the history and every
// handler run logged in Redis; writes the
// `soak-cluster` section of BENCHMARKS.md (full run only); exits 1 unless every message has exactly
// one complete reply, in order, nothing doubled or interleaved, no conversation handled twice at once,
// and every question ended exactly once.
import { join } from 'node:path';
import { createClient } from 'redis';
import { startRedis } from '../test/store/redis-server.js';
import { progress, ROOT } from './lib/child.js';
import { describeMachine, plainTable, type Row, summaryTable, writeSection } from './lib/report.js';
import { fmt, seededRandom } from './lib/stats.js';
import { startWorld } from './lib/world.js';
import { startBots } from './soak-cluster/bots.js';
import { checkCluster } from './soak-cluster/check.js';
import { startProxy } from './soak-cluster/proxy.js';
import { soakQuestions } from './soak-cluster/questions.js';

const ci = process.argv.includes('--ci');
const seed = Number(process.env.SOAK_SEED ?? 11);
const size = ci
  ? { bots: 3, messages: 100, conversations: 10, kills: 3, waveMs: 700, killEveryMs: 2000, questions: 40 }
  : { bots: 3, messages: 1000, conversations: 50, kills: 8, waveMs: 1000, killEveryMs: 2500, questions: 200 };
const QUESTION_TIMEOUT_MS = 4000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const random = seededRandom(seed);

type Fate = 'delivered' | 'answer lost' | 'delivered twice' | 'connection failed';
const fates = new Map<string, Fate>();
const eventOf = new Map<string, string>();
let live = false;
// The service's side of the network: before the bots are up (the webhook.test) a plain 204.
const network = async (request: Request): Promise<Response> => {
  if (!live) return new Response(null, { status: 204 });
  const id = request.headers.get('webhook-id') ?? '';
  if (fates.has(id)) return fetch(request); // a redelivery goes straight through
  const event = (await request.clone().json()) as { message?: { parts?: { text?: string }[] } };
  const text = event.message?.parts?.[0]?.text;
  if (text) eventOf.set(text, id);
  const roll = random();
  const fate: Fate =
    roll < 0.1
      ? 'answer lost'
      : roll < 0.2
        ? 'delivered twice'
        : roll < 0.25
          ? 'connection failed'
          : 'delivered';
  fates.set(id, fate);
  if (fate === 'connection failed') throw new TypeError('fetch failed: connection refused');
  if (fate === 'answer lost') {
    await fetch(request);
    return new Response(null, { status: 502 });
  }
  if (fate === 'delivered twice') {
    const [first] = await Promise.all([fetch(request.clone()), fetch(request)]);
    return first;
  }
  return fetch(request);
};

const machine = describeMachine();
const redis = await startRedis();
const prefix = `soak:${process.pid}:`;
const proxy = await startProxy();
const world = await startWorld({
  users: size.conversations,
  webhookUrl: proxy.url,
  mock: { fetch: network },
});
const bots = startBots({
  REDIS_URL: redis.url,
  SOAK_PREFIX: prefix,
  SOAK_API_KEY: world.apiKey,
  SOAK_WEBHOOK_SECRET: world.webhookSecret,
  SOAK_BASE_URL: world.baseUrl,
  SOAK_QUESTION_TIMEOUT_MS: String(QUESTION_TIMEOUT_MS),
});
const reader = createClient({ url: redis.url });
reader.on('error', () => {});
await reader.connect();
let ok = false;
try {
  for (let i = 0; i < size.bots; i++) proxy.add((await bots.start()).port);
  live = true;
  progress(
    `soak:cluster${ci ? ' (ci)' : ''}: ${size.messages} messages over ${size.conversations} conversations`,
  );
  const started = performance.now();

  // The service retries a failed delivery after 5 s of its clock: keep that clock moving.
  let pumping = true;
  const pump = (async () => {
    while (pumping) {
      await sleep(500);
      await world.mock.clock.advance(5);
    }
  })();

  // Chaos: SIGKILL a random bot every few seconds (the proxy stops sending to it), start a new one.
  const killOne = async () => {
    const victim = bots.pickVictim(random);
    if (!victim) return false;
    proxy.remove(victim.port);
    bots.kill(victim);
    proxy.add((await bots.start()).port);
    return true;
  };
  const chaos = (async () => {
    while (bots.kills.length < size.kills) {
      await sleep(size.killEveryMs);
      await killOne();
    }
  })();

  const waves = Math.ceil(size.messages / size.conversations);
  for (let wave = 0, i = 0; wave < waves; wave++) {
    for (let c = 0; c < size.conversations && i < size.messages; c++, i++) {
      world.mock.postUserMessage(world.conversations[c]!, {
        user_id: world.userIds[c]!,
        text: `c${c} m${wave}`,
      });
    }
    await sleep(size.waveMs);
  }
  await chaos;

  // Settle: let every retry come (the 5 min and 30 min retries too) until every event is acknowledged
  // and every handler that started has ended, or nothing changes for a while.
  const deadline = Date.now() + (ci ? 60_000 : 180_000);
  let last = '';
  let still = 0;
  for (;;) {
    await sleep(1500);
    const state = await checkCluster({ world, reader, prefix, kills: bots.kills, size, fates, eventOf });
    const key = JSON.stringify(state.progressKey);
    if (state.settled || Date.now() > deadline) break;
    still = key === last ? still + 1 : 0;
    last = key;
    if (still >= 2) await world.mock.clock.advance(300); // stuck on a later retry: move the clock on
  }
  const messagesSeconds = (performance.now() - started) / 1000;
  const result = await checkCluster({ world, reader, prefix, kills: bots.kills, size, fates, eventOf });
  const messageRows = result.rows(messagesSeconds); // before the questions part adds its kills

  // Then questions, on the same bots, network and chaos (a few more kills).
  progress(`soak:cluster: ${size.questions} questions, half answered, half timing out`);
  const asked = await soakQuestions({
    world,
    random,
    questions: size.questions,
    kills: ci ? 1 : 3,
    killEveryMs: size.killEveryMs,
    timeoutMs: QUESTION_TIMEOUT_MS,
    killOne,
    reader,
    prefix,
  });
  pumping = false;
  await pump;
  const seconds = (performance.now() - started) / 1000;
  ok = result.ok && asked.ok;
  const rows: Row[] = [...messageRows, ...asked.rows];
  result.details.push('', ...asked.details); // a paragraph of its own
  console.log(`\n${machine}\n\n${plainTable(rows)}\n\n${result.details.join('\n')}\n`);
  console.log(
    `${ok ? 'Every message answered exactly once, in order' : 'FAILED'}${ok && result.undelivered ? ` (except ${result.undelivered} conversation(s) where a message no bot had received came back with its retry after newer ones)` : ''} (${fmt(seconds, 1)} s, seed ${seed}).`,
  );
  if (!ci) {
    const body = [
      `_Written by \`npm run soak:cluster\` (seed ${seed}, ${fmt(seconds, 0)} s)._ Machine: ${machine}.`,
      '',
      summaryTable(rows),
      '',
      ...result.details,
    ].join('\n');
    writeSection(join(ROOT, 'BENCHMARKS.md'), 'soak-cluster', body);
    console.log('Wrote the soak-cluster section of BENCHMARKS.md.');
  }
} finally {
  await bots.stopAll();
  await proxy.close();
  await world.close();
  reader.destroy();
  await redis.stop();
}
process.exit(ok ? 0 : 1);
