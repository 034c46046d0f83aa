// The fault rows of `npm run soak:cluster` (issue 24): each starts its own world (a persistent
// redis-server, the mock, 3 bot processes with the SDK's default settings behind the round-robin
// proxy), sends steady traffic (every conversation gets a message every 2 s; each reply streams for
// about 1.2 s, as a model's would; the rolling restart's every 6 s, for 4.8 s), injects one fault a few seconds in, keeps the traffic up until
// a few seconds after the fault, then waits in real time for every message to be answered (settle.ts:
// the service's 5 s retry comes after 5 s; a message that only the 5-minute retry answers is counted
// as such). Each row counts lost, doubled, unmarked cuts, overlapping handlers, conversations out of
// order among messages that reached a bot within the documented wait bound, and messages that
// waited for the 5-minute retry (none allowed when the fault lasted less than the first retry
// interval plus `ackTimeoutMs`).
import { appendFileSync } from 'node:fs';
import { createClient } from 'redis';
import { DEFAULT_ACK_TIMEOUT_MS } from '../../src/webhooks/bot.js';
import { startRedis, type TestRedis } from '../../test/store/redis-server.js';
import type { Row } from '../lib/report.js';
import { fmt } from '../lib/stats.js';
import { startWorld } from '../lib/world.js';
import { type BotProcess, startBots } from './bots.js';
import { checkCluster } from './check.js';
import { type LossyLink, startLossyLink } from './lossy-link.js';
import { startNetwork } from './network.js';
import { startProxy } from './proxy.js';
import { settle } from './settle.js';

/** The service's first retry (PROTOCOL.md section 6) plus the SDK's default `ackTimeoutMs`. */
const SHORT_FAULT_MS = 5000 + DEFAULT_ACK_TIMEOUT_MS;
/**
 * How long nothing may move before only a later retry can answer what is left: longer than any lock,
 * lease or gap wait of the defaults (30 s at most, a writer lease of `messages.reply`; gapWaitMs is
 * 15 s), so a message a live bot would still run is never counted as waiting for the 5-minute retry.
 */
const QUIET_MS = 35_000;
/** The most a rolling restart may take per instance (Kubernetes' default grace period). */
const GRACE_MS = 30_000;
/** Not a multiple of 3, so the round-robin proxy sends each conversation's messages to every bot in turn. */
const CONVERSATIONS = 13;
/** How the traffic goes: each conversation gets a message every `roundMs`; a reply streams 8 chunks `chunkMs` apart. */
interface Pace {
  roundMs: number;
  chunkMs: number;
}
const PACE: Pace = { roundMs: 2000, chunkMs: 150 };
/** Traffic before the fault, and after it ends. */
const LEAD_MS = 3000;
const TAIL_MS = 4000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a fault can reach. */
interface FaultContext {
  redis: TestRedis;
  link: LossyLink | undefined;
  bots: ReturnType<typeof startBots>;
  random: () => number;
  /** Starts a bot and puts it behind the proxy. */
  addBot(): Promise<BotProcess>;
  /** Takes a bot out of the proxy's rotation. */
  removeBot(bot: BotProcess): void;
  /** The running bot with the most handlers running now. */
  busyBot(): BotProcess;
}

/** What a fault did. */
interface Injected {
  /** How long the fault lasted, for the 5-minute-retry rule. */
  faultMs: number;
  note: string;
  /** A goal of the row's own (the rolling restart's time per instance), with whether it is met. */
  own?: { result: string; goal: string; met: boolean };
  /** No reply may be cut at all, marked or not (a graceful restart). */
  noCuts?: boolean;
}

/** One row. */
export interface FaultRow {
  name: string;
  /** In `soak:cluster:ci` too: short and passing reliably. */
  ci: boolean;
  /** The bots reach Redis through the lossy link. */
  lossy?: boolean;
  /** The traffic, when not PACE. */
  pace?: Pace;
  /**
   * The fault comes right after the traffic's last message instead of in its midst, so no later
   * message of a conversation wakes its queue: only the service's retries can answer what it hit.
   */
  lastWords?: boolean;
  inject(context: FaultContext): Promise<Injected>;
}

const pauseRedis =
  (ms: number) =>
  async ({ redis }: FaultContext): Promise<Injected> => {
    redis.signal('SIGSTOP');
    await sleep(ms);
    redis.signal('SIGCONT');
    return { faultMs: ms, note: `redis-server stopped (SIGSTOP) for ${ms / 1000} s, then resumed` };
  };

/** The rows, in the order they run. */
export const FAULT_ROWS: FaultRow[] = [
  {
    name: 'Redis restart with persistence',
    ci: true,
    async inject({ redis }) {
      const started = Date.now();
      await redis.restart(1000);
      const faultMs = Date.now() - started;
      return {
        faultMs,
        note: `redis-server (appendonly yes, everysec) shut down with SIGTERM, 1 s down, started again on its port from its append-only file: ${fmt(faultMs / 1000, 1)} s without Redis`,
      };
    },
  },
  {
    name: 'Redis crash with persistence',
    ci: false,
    async inject({ redis }) {
      const started = Date.now();
      await redis.restart(1000, 'SIGKILL');
      const faultMs = Date.now() - started;
      return {
        faultMs,
        note: `redis-server (appendonly yes, everysec) SIGKILLed, 1 s down, started again on its port from its append-only file (up to a second of writes lost, as docs/bot.md says): ${fmt(faultMs / 1000, 1)} s without Redis`,
      };
    },
  },
  { name: 'Redis pause 3 s', ci: true, inject: pauseRedis(3000) },
  { name: 'Redis pause 3 s, no later message', ci: false, lastWords: true, inject: pauseRedis(3000) },
  { name: 'Redis pause 30 s', ci: false, inject: pauseRedis(30_000) },
  {
    name: 'lossy link to Redis',
    ci: true,
    lossy: true,
    async inject({ link }) {
      if (!link) throw new Error('the lossy row needs its link');
      link.lossy(true);
      await sleep(15_000);
      link.lossy(false);
      return {
        faultMs: 2000,
        note: `every connection to Redis through a TCP link that, for 15 s, cut ${link.cuts} connections and stalled them ${link.stalls} times for 0.3 to 2 s each (each loss lasts at most 2 s)`,
      };
    },
  },
  {
    name: 'paused instance 10 s',
    ci: false,
    async inject({ bots, busyBot }) {
      const bot = busyBot();
      const open = openRuns(bots.log, bot.pid);
      bots.pause(bot);
      await sleep(10_000);
      bots.resume(bot);
      return {
        faultMs: 10_000,
        note: `a bot process stopped (SIGSTOP) for 10 s with ${open} handlers running, still behind the proxy, then resumed (SIGCONT)`,
      };
    },
  },
  {
    name: 'rolling restart with bot.close',
    ci: true,
    // Replies of 4.8 s, so each instance has several mid-stream when its SIGTERM comes.
    pace: { roundMs: 6000, chunkMs: 600 },
    async inject({ bots, addBot, removeBot }) {
      const times: number[] = [];
      const codes: (number | null)[] = [];
      const running: number[] = [];
      for (const old of bots.running()) {
        // As a Deployment's rolling update does: the new instance is started, the old one gets
        // SIGTERM (its handler closes the bot, soak-cluster-bot.ts) and leaves the load balancer a
        // second later, so deliveries still reach it while it closes (answered 503, retried).
        const replacement = addBot();
        running.push(openRuns(bots.log, old.pid));
        const started = Date.now();
        const exit = bots.terminate(old);
        await sleep(1000);
        removeBot(old);
        codes.push(await exit);
        times.push(Date.now() - started);
        await replacement;
      }
      // A closing bot finishes what runs and starts nothing (each conversation is let go after it).
      const startedAfter = bots.log.filter(
        (entry) =>
          entry.event === 'start' &&
          bots.log.some((e) => e.event === 'closing' && e.pid === entry.pid && e.at <= entry.at),
      ).length;
      const slowest = Math.max(...times);
      return {
        faultMs: 0,
        note: `each of the 3 instances in turn: a new one started, the old one sent SIGTERM (server.close, bot.close({ deadline: 20000 }), exit) and taken out of the proxy 1 s later, with ${running.join(', ')} handlers running; SIGTERM to exit ${times.map((t) => fmt(t / 1000, 1)).join(', ')} s, exit codes ${codes.join(', ')}; ${startedAfter} runs started by a process after its SIGTERM`,
        own: {
          result: `slowest instance ${fmt(slowest / 1000, 1)} s, ${startedAfter} runs started after SIGTERM`,
          goal: `<= ${GRACE_MS / 1000} s each, exit 0, no run started after SIGTERM`,
          met: slowest <= GRACE_MS && codes.every((code) => code === 0) && startedAfter === 0,
        },
        noCuts: true,
      };
    },
  },
  { name: 'SIGKILL mid-reply', ci: true, inject: killBusyBot },
  { name: 'SIGKILL mid-reply, no later message', ci: true, lastWords: true, inject: killBusyBot },
];

/** SIGKILLs the bot with the most handlers streaming and starts another in its place. */
async function killBusyBot({ bots, busyBot, addBot, removeBot }: FaultContext): Promise<Injected> {
  const bot = busyBot();
  const open = openRuns(bots.log, bot.pid);
  removeBot(bot);
  bots.kill(bot);
  await addBot();
  return { faultMs: 0, note: `a bot process SIGKILLed with ${open} handlers streaming, a new one started` };
}

/** Handlers of process `pid` that started and have not ended. */
function openRuns(log: ReturnType<typeof startBots>['log'], pid: number) {
  let open = 0;
  for (const entry of log) {
    if (entry.pid !== pid) continue;
    if (entry.event === 'start') open++;
    if (entry.event === 'end') open--;
  }
  return open;
}

/** Runs one row from a fresh world; answers its summary row and its details. */
export async function runFaultRow(row: FaultRow, random: () => number) {
  const pace = row.pace ?? PACE;
  const redis = await startRedis({ appendonly: true });
  const link = row.lossy ? await startLossyLink(Number(new URL(redis.url).port), random) : undefined;
  const prefix = `soak:${process.pid}:`;
  const proxy = await startProxy();
  const network = startNetwork({ random, faulty: false });
  const world = await startWorld({
    users: CONVERSATIONS,
    webhookUrl: proxy.url,
    mock: { fetch: network.fetch },
  });
  const bots = startBots({
    REDIS_URL: link?.url ?? redis.url,
    SOAK_PREFIX: prefix,
    SOAK_API_KEY: world.apiKey,
    SOAK_WEBHOOK_SECRET: world.webhookSecret,
    SOAK_BASE_URL: world.baseUrl,
    SOAK_CHUNK_MS: String(pace.chunkMs),
  });
  const reader = createClient({ url: redis.url, socket: { reconnectStrategy: () => 100 } });
  reader.on('error', () => {});
  await reader.connect();
  try {
    const addBot = async () => {
      const bot = await bots.start();
      proxy.add(bot.port);
      return bot;
    };
    const context: FaultContext = {
      redis,
      link,
      bots,
      random,
      addBot,
      removeBot: (bot) => proxy.remove(bot.port),
      busyBot: () => {
        const running = bots.running();
        const open = running.map((bot) => openRuns(bots.log, bot.pid));
        return running[open.indexOf(Math.max(...open))] as BotProcess;
      },
    };
    for (let i = 0; i < 3; i++) await addBot();
    network.open();
    const started = Date.now();

    let fault: Injected | undefined;
    let faultEnded = Number.POSITIVE_INFINITY;
    const inject = async () => {
      fault = await row.inject(context);
      faultEnded = Date.now();
    };
    const injecting = row.lastWords ? undefined : sleep(LEAD_MS).then(inject);
    const postUntil = () => (row.lastWords ? started + LEAD_MS : faultEnded + TAIL_MS);
    let rounds = 0;
    const postedAt = new Map<string, number>();
    while (Date.now() < postUntil()) {
      for (let c = 0; c < CONVERSATIONS; c++) {
        const text = `c${c} m${rounds}`;
        postedAt.set(text, Date.now());
        world.mock.postUserMessage(world.conversations[c]!, { user_id: world.userIds[c]!, text });
        await sleep(pace.roundMs / CONVERSATIONS);
      }
      rounds++;
    }
    await (injecting ?? inject());
    const size = { messages: rounds * CONVERSATIONS, conversations: CONVERSATIONS };
    const check = () => checkCluster({ world, bots, network, reader, prefix, size, startedAt: started });
    const { waited } = await settle({
      world,
      eventOf: network.eventOf,
      check,
      quietMs: QUIET_MS,
      limitMs: 240_000,
    });
    const result = await check();
    // SOAK_LOG=file: every line the bots logged, for a look at what a row's figures came from.
    if (process.env.SOAK_LOG)
      appendFileSync(
        process.env.SOAK_LOG,
        `${bots.log.map((e) => JSON.stringify({ row: row.name, ...e })).join('\n')}\n`,
      );
    const seconds = (Date.now() - started) / 1000;
    // How long each message waited for its answer: from its post to the end of its last handler run.
    const endedAt = new Map<string, number>();
    for (const entry of bots.log) if (entry.event === 'end' && entry.text) endedAt.set(entry.text, entry.at);
    const waits = new Map([...postedAt].map(([text, at]) => [text, (endedAt.get(text) ?? Number.NaN) - at]));
    return report(row, fault as Injected, result, waited, waits, seconds);
  } finally {
    await bots.stopAll();
    await proxy.close();
    await world.close();
    await link?.close();
    reader.destroy();
    await redis.stop();
  }
}

function report(
  row: FaultRow,
  fault: Injected,
  result: Awaited<ReturnType<typeof checkCluster>>,
  waited: { retryS: number; texts: string[] }[],
  waits: ReadonlyMap<string, number>,
  seconds: number,
) {
  const pace = row.pace ?? PACE;
  // On the real clock, of the messages answered before the mock's clock moved to a later retry.
  const later = new Set(waited.flatMap((w) => w.texts));
  const inTime = [...waits]
    .filter(([text, wait]) => !later.has(text) && !Number.isNaN(wait))
    .map(([, wait]) => wait);
  const slowest = Math.max(0, ...inTime);
  const overShort = inTime.filter((wait) => wait >= SHORT_FAULT_MS).length;
  const c = result.counts;
  const messages = c.answeredOnce + c.missing + c.doubled;
  const firstLong = waited[0];
  const waitedLong = firstLong?.texts.filter((text) => result.answeredTexts.has(text)).length ?? 0;
  const short = fault.faultMs < SHORT_FAULT_MS;
  const cuts = fault.noCuts ? c.interrupted + c.cut : c.cut;
  const met =
    c.missing === 0 &&
    c.doubled === 0 &&
    c.interleaved === 0 &&
    cuts === 0 &&
    c.overlapping === 0 &&
    c.outOfOrder === 0 &&
    (!short || waitedLong === 0) &&
    (fault.own?.met ?? true);
  const summary: Row = {
    measurement: `fault: ${row.name}`,
    result:
      `${fmt(messages)} messages: ${c.missing} lost, ${c.doubled} doubled, ${c.cut} cut unmarked (${c.interrupted} marked), ` +
      `${c.overlapping} overlapping runs${c.besideFrozen ? ` (${c.besideFrozen} more beside a stopped process's frozen run)` : ''}, ${c.outOfOrder} conversations out of order (${c.undelivered} late past the bound), ` +
      `${waitedLong} waited for the 5-minute retry${fault.own ? `; ${fault.own.result}` : ''}`,
    goal:
      `0 lost, 0 doubled, 0 ${fault.noCuts ? 'cut replies' : 'cut unmarked'}, 0 overlapping, 0 out of order, ` +
      `${short ? '0 waited for the 5-minute retry' : `5-minute retries allowed (fault longer than ${SHORT_FAULT_MS / 1000} s)`}` +
      `${fault.own ? `; ${fault.own.goal}` : ''}`,
    status: met ? 'met' : 'NOT MET',
  };
  const laterRetries = waited
    .slice(1)
    .map((w) => `${w.texts.length} still unanswered at the ${w.retryS / 60}-minute retry`)
    .join(', ');
  const details = [
    `**${row.name}** (${fmt(seconds, 0)} s): ${fault.note}. ${fmt(messages)} messages over ${CONVERSATIONS} conversations ` +
      `(each a message every ${fmt(pace.roundMs / 1000, 0)} s, replies streamed over ${fmt((8 * pace.chunkMs) / 1000, 1)} s), ` +
      `${fmt(c.attempts)} delivery attempts, ${fmt(c.handlerRuns)} handler runs; of the messages answered before the ` +
      `5-minute retry, the slowest ended its run ${fmt(slowest / 1000, 1)} s after its post (${overShort} took ${SHORT_FAULT_MS / 1000} s or more); ` +
      `${firstLong ? `${firstLong.texts.length} messages unanswered when only the 5-minute retry was left (${waitedLong} answered by it${laterRetries ? `; ${laterRetries}` : ''})` : 'no message waited for the 5-minute retry'}. ` +
      `Left in Redis: ${c.stranded} queued, ${c.inFlight} claims in flight.`,
    ...(firstLong?.texts.slice(0, 5) ?? []).map(
      (text) => `- answered only by the 5-minute retry or later:${result.describe(text)}`,
    ),
    ...result.problems.slice(0, process.env.SOAK_DEBUG ? 400 : 8),
  ];
  return { met, row: summary, details };
}
