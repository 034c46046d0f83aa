// What the cluster soak counts: the replies in each conversation's history (complete, cut by a kill,
// doubled, interleaved, out of order) and the handler runs every bot logged in Redis (never two at
// once in one conversation; a killed bot's run lasts until its kill).
import type { Row } from '../lib/report.js';
import { fmt } from '../lib/stats.js';
import { agentMessages, textOf, type World } from '../lib/world.js';
import { replyChunks } from '../soak-cluster-bot.js';
import type { Kill } from './bots.js';

/** How a reply whose handler was stopped ends (the SDK's default interrupted note). */
const INTERRUPTED_NOTE = ' … [interrupted]';

interface LogEntry {
  event: 'start' | 'end';
  /** Numbers the handler runs of one process. */
  run: number;
  conversationId: string;
  text: string;
  pid: number;
  at: number;
}

/** What `checkCluster` reads. */
export interface CheckInput {
  world: World;
  reader: {
    lRange(key: string, from: number, to: number): Promise<string[]>;
    keys(pattern: string): Promise<string[]>;
    zCard(key: string): Promise<number>;
    get(key: string): Promise<string | null>;
  };
  prefix: string;
  kills: readonly Kill[];
  size: { messages: number; conversations: number; kills: number };
  fates: ReadonlyMap<string, string>;
  /** The event id that delivered each user message's text. */
  eventOf: ReadonlyMap<string, string>;
}

/**
 * Handler runs of one conversation that overlapped in time, runs still open, and runs a kill cut
 * (started by the killed process, never ended): each may leave one reply cut.
 */
function overlaps(entries: LogEntry[], kills: readonly Kill[]) {
  const killedAt = new Map(kills.map((kill) => [kill.pid, kill.at]));
  const runs: { from: number; to: number }[] = [];
  let open = 0;
  let killed = 0;
  entries.forEach((entry, i) => {
    if (entry.event !== 'start') return;
    const end = entries
      .slice(i + 1)
      .find((e) => e.event === 'end' && e.pid === entry.pid && e.text === entry.text);
    const to = end?.at ?? killedAt.get(entry.pid);
    if (to === undefined) open++;
    else if (!end) killed++;
    runs.push({ from: entry.at, to: to ?? Number.POSITIVE_INFINITY });
  });
  runs.sort((a, b) => a.from - b.from);
  let count = 0;
  let until = Number.NEGATIVE_INFINITY;
  for (const run of runs) {
    if (run.from < until) count++;
    until = Math.max(until, run.to);
  }
  return { count, open, killed, runs: runs.length };
}

/** Reads the history and the handler log and counts. */
export async function checkCluster(input: CheckInput) {
  const { world, size, kills } = input;
  const log = (await input.reader.lRange(`${input.prefix}soak:log`, 0, -1)).map(
    (line) => JSON.parse(line) as LogEntry,
  );
  let answeredOnce = 0;
  let missing = 0;
  let doubled = 0;
  let cut = 0;
  let interrupted = 0;
  let interleaved = 0;
  let outOfOrder = 0;
  let undelivered = 0;
  let overlapping = 0;
  let openRuns = 0;
  let killedRuns = 0;
  let handlerRuns = 0;
  const problems: string[] = [];
  const unanswered: string[] = [];
  const received = world.mock.deliveries.filter((d) => d.type === 'message.received');
  // The attempts at delivering message k of conversation c, as `attempt:status` (for the details).
  const attempts = (c: number, k: number) => {
    const text = `c${c} m${k}`;
    const id = input.eventOf.get(text);
    const tried = received
      .filter((d) => d.event_id === id)
      .map((d) => `${d.attempt}:${d.status ?? d.error ?? '-'}`);
    // A first attempt answered 502 on a network that delivered it: the bot died holding the request.
    return ` (${text}: first delivery ${input.fates.get(id ?? '') ?? '?'}, attempts ${tried.join(' ')})`;
  };
  const neverQueued = (c: number, k: number) => {
    const id = input.eventOf.get(`c${c} m${k}`) ?? '';
    const first = received.find((d) => d.event_id === id && d.attempt === 1);
    const fate = input.fates.get(id);
    return fate === 'connection failed' || (fate === 'delivered' && first?.status === 502);
  };
  for (const [c, conversationId] of world.conversations.entries()) {
    const expected = new Map<string, number>(); // full reply text -> message index
    for (let k = 0; c + k * size.conversations < size.messages; k++) {
      expected.set(replyChunks(`c${c} m${k}`).join(''), k);
    }
    const isCut = (text: string) => text === '' || [...expected.keys()].some((full) => full.startsWith(text));
    const complete = new Map<number, number>();
    const order: number[] = [];
    for (const message of await agentMessages(world, conversationId)) {
      const text = textOf(message) ?? '';
      const k = expected.get(text);
      if (k !== undefined && message.status === 'sent') {
        complete.set(k, (complete.get(k) ?? 0) + 1);
        order.push(k);
      } else if (text.endsWith(INTERRUPTED_NOTE) && isCut(text.slice(0, -INTERRUPTED_NOTE.length))) {
        interrupted++; // its handler's signal fired (lock lost, run too long): ended with the mark
      } else if (isCut(text)) {
        cut++; // a bot killed while it streamed: the text so far, never anything else
      } else {
        interleaved++;
        problems.push(
          `- ${conversationId}: reply ${JSON.stringify(text)} is no reply's text or a cut of one`,
        );
      }
    }
    for (const k of expected.values()) {
      const n = complete.get(k) ?? 0;
      if (n === 1) answeredOnce++;
      else if (n === 0) {
        missing++;
        // Listed first and each on its own (up to 20), whatever else the details hold.
        if (missing <= 20)
          unanswered.push(`- ${conversationId}: c${c} m${k} has no complete reply${attempts(c, k)}`);
      } else doubled++;
    }
    // A late message: one answered after a message that came after it.
    const lateOnes = order.filter((k, i) => order.slice(0, i).some((before) => before > k));
    const late = lateOnes[0];
    if (late !== undefined) {
      // Excused only when no bot could have queued it in time: the service's first attempt never
      // reached a bot, or reached only one that was killed holding it (502 from the proxy).
      const unseen = lateOnes.every((k) => neverQueued(c, k));
      if (unseen) undelivered++;
      else outOfOrder++;
      problems.push(
        `- ${conversationId}${unseen ? ' (its first delivery never reached a live bot)' : ''}: replies in the order m${order.join(', m')}${lateOnes.map((k) => attempts(c, k)).join('')}`,
      );
    }
    if (late !== undefined && process.env.SOAK_DEBUG) {
      const t0 = log[0]?.at ?? 0;
      for (const e of log.filter((entry) => entry.conversationId === conversationId)) {
        problems.push(`    ${e.at - t0} ${e.pid}#${e.run} ${e.event} ${e.text}`);
      }
      problems.push(`    kills: ${kills.map((kill) => `${kill.pid}@${kill.at - t0}`).join(' ')}`);
    }
    const runs = overlaps(
      log.filter((entry) => entry.conversationId === conversationId),
      kills,
    );
    overlapping += runs.count;
    openRuns += runs.open;
    killedRuns += runs.killed;
    handlerRuns += runs.runs;
  }
  const acknowledged = new Set(
    received.filter((d) => d.status !== null && d.status < 300).map((d) => d.event_id),
  );
  const ok =
    answeredOnce === size.messages &&
    doubled === 0 &&
    interleaved === 0 &&
    outOfOrder === 0 &&
    overlapping === 0 &&
    cut + interrupted <= killedRuns;
  // What the runtime left in Redis: messages queued that no holder took, claims never settled.
  let stranded = 0;
  for (const key of await input.reader.keys(`${input.prefix}q:*`)) stranded += await input.reader.zCard(key);
  let inFlight = 0;
  for (const key of await input.reader.keys(`${input.prefix}k:dedupe:*`)) {
    if ((await input.reader.get(key)) === 'in_flight') inFlight++;
  }
  const fateCount = (fate: string) => [...input.fates.values()].filter((value) => value === fate).length;
  const details = [
    `${fmt(size.messages)} user messages over ${size.conversations} conversations, posted in waves to the loopback ` +
      `mock, delivered through a faulty network (first delivery: answer lost ${fateCount('answer lost')}×, ` +
      `delivered twice ${fateCount('delivered twice')}×, connection failed ${fateCount('connection failed')}×) ` +
      `to a round-robin proxy in front of 3 bot processes (createBot + createRedisStore + toNodeHandler, ` +
      `'queue' policy, lockTtlMs and the replies' writerLeaseMs 2 s) on one redis-server. ${kills.length} SIGKILLs of a random bot, each ` +
      `replaced by a new process. ${fmt(received.length)} delivery attempts, ${fmt(acknowledged.size)} events ` +
      `acknowledged, ${fmt(handlerRuns)} handler runs logged. Left in Redis at the end: ${stranded} ` +
      `messages still queued, ${inFlight} dedupe claims still \`in_flight\`.`,
    ...unanswered,
    ...problems.slice(0, process.env.SOAK_DEBUG ? 400 : 20),
  ];
  return {
    ok,
    undelivered,
    settled: answeredOnce === size.messages && openRuns === 0,
    progressKey: [answeredOnce, acknowledged.size, received.length, handlerRuns],
    details,
    rows: (seconds: number): Row[] => [
      {
        measurement: `cluster: messages with exactly one complete reply (${kills.length} kills)`,
        result: `${fmt(answeredOnce)}/${fmt(size.messages)} (${missing} missing, ${doubled} doubled)`,
        goal: `${fmt(size.messages)}/${fmt(size.messages)}`,
        status: answeredOnce === size.messages && doubled === 0 ? 'met' : 'NOT MET',
      },
      {
        measurement:
          'cluster: replies marked interrupted / left cut, beside the handler runs the kills cut (one each at most)',
        result: `${interrupted} / ${cut} (${killedRuns} runs cut by ${kills.length} kills)`,
        goal: `<= ${killedRuns} in all`,
        status: cut + interrupted <= killedRuns ? 'met' : 'NOT MET',
      },
      {
        measurement: 'cluster: conversations out of order / interleaved replies',
        result: `${outOfOrder} / ${interleaved}`,
        goal: '0 / 0',
        status: outOfOrder === 0 && interleaved === 0 ? 'met' : 'NOT MET',
      },
      {
        measurement:
          'cluster: conversations with a late reply whose first delivery reached no live bot (refused, or bot killed)',
        result: `${undelivered}`,
        goal: 'info: no bot knew of it before its retry',
        status: 'info',
      },
      {
        measurement: 'cluster: handlers of one conversation running at once',
        result: `${overlapping} (of ${fmt(handlerRuns)} runs)`,
        goal: '0',
        status: overlapping === 0 ? 'met' : 'NOT MET',
      },
      { measurement: 'cluster: wall time', result: `${fmt(seconds, 1)} s`, goal: '', status: 'info' },
    ],
  };
}
