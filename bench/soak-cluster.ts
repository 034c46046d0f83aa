// `npm run soak:cluster` (`--ci`: the small one CI runs). First the chaos part: three bot processes
// on one Redis store behind a round-robin loopback proxy, the loopback mock delivering to the proxy
// through a faulty network (answers lost, deliveries doubled, connections failed: the mock
// redelivers), while a chaos loop SIGKILLs a random bot every few seconds and starts a new one. Each
// handler streams a reply of known text. Then the questions part (soak-cluster/questions.ts):
// questions asked, half answered, half timing out, on the same bots under more kills. Then the fault
// rows (soak-cluster/fault-rows.ts: Redis restarted, paused, reached over a lossy link; an instance
// paused, SIGKILLed, a rolling restart with bot.close), each on a world of its own with the SDK's
// default settings. The mock's retry schedule runs in real time throughout: a message only the
// 5-minute retry answers is counted as such (soak-cluster/settle.ts). Counts every reply in the
// history and every handler run the bots logged; writes the `soak-cluster` section of BENCHMARKS.md
// (full run only); exits 1 unless every message has exactly one complete reply, in order, nothing
// doubled or interleaved, no conversation handled twice at once, every question ended exactly once,
// and every fault row met its goals. `--rows=restart,pause 3` runs only the fault rows whose names
// hold one of those (`chaos`: the chaos and questions parts too), and writes nothing.
import { join } from 'node:path';
import { createClient } from 'redis';
import { startRedis } from '../test/store/redis-server.js';
import { progress, ROOT } from './lib/child.js';
import { describeMachine, plainTable, type Row, summaryTable, writeSection } from './lib/report.js';
import { fmt, seededRandom } from './lib/stats.js';
import { startWorld } from './lib/world.js';
import { startBots } from './soak-cluster/bots.js';
import { checkCluster } from './soak-cluster/check.js';
import { FAULT_ROWS, runFaultRow } from './soak-cluster/fault-rows.js';
import { startNetwork } from './soak-cluster/network.js';
import { startProxy } from './soak-cluster/proxy.js';
import { soakQuestions } from './soak-cluster/questions.js';
import { settle } from './soak-cluster/settle.js';

const ci = process.argv.includes('--ci');
const only = process.argv
  .find((arg) => arg.startsWith('--rows='))
  ?.slice('--rows='.length)
  .split(',')
  .map((name) => name.trim().toLowerCase());
const seed = Number(process.env.SOAK_SEED ?? 11);
const size = ci
  ? { bots: 3, messages: 100, conversations: 10, kills: 3, waveMs: 700, killEveryMs: 2000, questions: 40 }
  : { bots: 3, messages: 1000, conversations: 50, kills: 8, waveMs: 1000, killEveryMs: 2500, questions: 200 };
const QUESTION_TIMEOUT_MS = 4000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const random = seededRandom(seed);
const machine = describeMachine();

/** The chaos and questions parts, on one world. */
async function chaosPart() {
  const redis = await startRedis();
  const prefix = `soak:${process.pid}:`;
  const proxy = await startProxy();
  const network = startNetwork({ random, faulty: true });
  const world = await startWorld({
    users: size.conversations,
    webhookUrl: proxy.url,
    mock: { fetch: network.fetch },
  });
  const bots = startBots({
    REDIS_URL: redis.url,
    SOAK_PREFIX: prefix,
    SOAK_API_KEY: world.apiKey,
    SOAK_WEBHOOK_SECRET: world.webhookSecret,
    SOAK_BASE_URL: world.baseUrl,
    SOAK_QUESTION_TIMEOUT_MS: String(QUESTION_TIMEOUT_MS),
    // A killed holder's conversation moves on after two seconds, not the default thirty.
    SOAK_LOCK_TTL_MS: '2000',
    SOAK_MAX_HANDLER_MS: '20000',
  });
  const reader = createClient({ url: redis.url });
  reader.on('error', () => {});
  await reader.connect();
  try {
    for (let i = 0; i < size.bots; i++) proxy.add((await bots.start()).port);
    network.open();
    progress(
      `soak:cluster${ci ? ' (ci)' : ''}: ${size.messages} messages over ${size.conversations} conversations`,
    );
    const started = performance.now();

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

    // Settle, in real time: the service's 5 s retry comes after 5 s; what only its 5-minute retry
    // answers is counted as such (settle.ts).
    const startedAt = Date.now();
    const check = () => checkCluster({ world, bots, network, reader, prefix, size, startedAt });
    const { waited } = await settle({
      world,
      eventOf: network.eventOf,
      check,
      // Longer than gapWaitMs (15 s): a holder waiting for a missing message moves nothing meanwhile.
      quietMs: 25_000,
      limitMs: ci ? 120_000 : 240_000,
    });
    const messagesSeconds = (performance.now() - started) / 1000;
    const result = await check();
    const messageRows = result.rows(messagesSeconds); // before the questions part adds its kills
    const waitedLong = waited[0]?.texts.filter((text) => result.answeredTexts.has(text)).length ?? 0;
    for (const text of waited[0]?.texts.slice(0, 10) ?? []) {
      result.details.push(`- answered only by the 5-minute retry or later:${result.describe(text)}`);
    }
    messageRows.push({
      measurement: 'cluster: messages answered only by the 5-minute retry (the mock clock runs in real time)',
      result: `${waitedLong}`,
      goal: 'info: the kills and the network cut for an instant',
      status: 'info',
    });

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
      network,
      log: bots.log,
      prefix,
    });
    const seconds = (performance.now() - started) / 1000;
    const rows: Row[] = [...messageRows, ...asked.rows];
    return {
      ok: result.ok && asked.ok,
      rows,
      details: [...result.details, '', ...asked.details], // the questions: a paragraph of their own
      summary: `${result.ok && asked.ok ? 'Every message answered exactly once, in order' : 'FAILED'}${result.ok && result.undelivered ? ` (except ${result.undelivered} conversation(s) where a late message reached a bot only past the wait bound)` : ''} (${fmt(seconds, 1)} s)`,
    };
  } finally {
    await bots.stopAll();
    await proxy.close();
    await world.close();
    reader.destroy();
    await redis.stop();
  }
}

const started = performance.now();
const rows: Row[] = [];
const details: string[] = [];
let ok = true;
if (!only || only.includes('chaos')) {
  const chaos = await chaosPart();
  ok &&= chaos.ok;
  rows.push(...chaos.rows);
  details.push(...chaos.details);
  console.log(`chaos part: ${chaos.summary}`);
}
const faults = FAULT_ROWS.filter((row) =>
  only ? only.some((name) => row.name.toLowerCase().includes(name)) : !ci || row.ci,
);
for (const row of faults) {
  progress(`soak:cluster: fault row "${row.name}"`);
  const outcome = await runFaultRow(row, random);
  ok &&= outcome.met;
  rows.push(outcome.row);
  details.push('', ...outcome.details);
  console.log(`${outcome.row.measurement}: ${outcome.row.status}: ${outcome.row.result}`);
}
const seconds = (performance.now() - started) / 1000;
console.log(`\n${machine}\n\n${plainTable(rows)}\n\n${details.join('\n')}\n`);
console.log(`${ok ? 'Every row met its goals' : 'FAILED'} (${fmt(seconds, 1)} s, seed ${seed}).`);
if (!ci && !only) {
  const body = [
    `_Written by \`npm run soak:cluster\` (seed ${seed}, ${fmt(seconds, 0)} s)._ Machine: ${machine}.`,
    '',
    summaryTable(rows),
    '',
    ...details,
  ].join('\n');
  writeSection(join(ROOT, 'BENCHMARKS.md'), 'soak-cluster', body);
  console.log('Wrote the soak-cluster section of BENCHMARKS.md.');
}
process.exit(ok ? 0 : 1);
