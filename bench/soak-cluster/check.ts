// What the cluster soak counts: the replies in each conversation's history (complete, cut by a kill,
// doubled, interleaved, out of order) and the handler runs every bot logged (never two at once in one
// conversation; a killed bot's run lasts until its kill).
import { DEFAULT_GAP_WAIT_MS } from '../../src/webhooks/lanes.js';
import type { Row } from '../lib/report.js';
import { fmt } from '../lib/stats.js';
import { agentMessages, textOf, type World } from '../lib/world.js';
import { replyChunks } from '../soak-cluster-bot.js';
import type { Kill, LogEntry, Pause } from './bots.js';

/** How a reply whose handler was stopped ends (the SDK's default interrupted note). */
const INTERRUPTED_NOTE = ' … [interrupted]';

/**
 * How long a message waits for a predecessor that has not reached a bot yet, with the default
 * settings (docs/bot.md, "Order with gaps": `gapWaitMs`). A predecessor that reached a bot no later
 * than this after its successor did must be answered first. Measured from when each delivery's
 * request was read by a bot process that answered it (the docs count from when the successor was
 * ready to run, which is no earlier, and to when the predecessor reached the store, which is no
 * earlier either: an admission tried again through a store outage counts from its first try).
 */
export const GAP_WAIT_MS = DEFAULT_GAP_WAIT_MS;

/** What `checkCluster` reads. */
export interface CheckInput {
  world: World;
  /** Every line the bots logged, and their kills. */
  bots: { log: readonly LogEntry[]; kills: readonly Kill[]; pauses: readonly Pause[] };
  /** What the network saw: each first delivery's fate, the event that delivered each user message's text. */
  network: { fates: ReadonlyMap<string, string>; eventOf: ReadonlyMap<string, string> };
  reader: {
    keys(pattern: string): Promise<string[]>;
    zCard(key: string): Promise<number>;
    get(key: string): Promise<string | null>;
  };
  prefix: string;
  size: { messages: number; conversations: number };
  /** When the part began (ms since the epoch): the details' times count from it. */
  startedAt?: number;
}

/** A stretch of time (ms since the epoch). */
interface Span {
  from: number;
  to: number;
}

/** The parts of `span` outside every one of `gaps`. */
function outside(span: Span, gaps: readonly Span[]): Span[] {
  let parts = [span];
  for (const gap of gaps) {
    parts = parts.flatMap((part) =>
      gap.to <= part.from || gap.from >= part.to
        ? [part]
        : [
            { from: part.from, to: gap.from },
            { from: gap.to, to: part.to },
          ].filter((piece) => piece.to > piece.from),
    );
  }
  return parts;
}

/** Runs among `runs` that overlap another in time: each is counted once. */
function overlapping(runs: readonly Span[][]): number {
  const stretches = runs.flatMap((spans, run) => spans.map((span) => ({ ...span, run })));
  stretches.sort((a, b) => a.from - b.from);
  const counted = new Set<number>();
  let until = Number.NEGATIVE_INFINITY;
  let holder = -1;
  for (const stretch of stretches) {
    if (stretch.from < until && stretch.run !== holder) counted.add(stretch.run);
    if (stretch.to > until) {
      until = stretch.to;
      holder = stretch.run;
    }
  }
  return counted.size;
}

/**
 * Handler runs of one conversation that overlapped in time, runs still open, and runs a kill cut
 * (started by the killed process, never ended): each may leave one reply cut. A run of a process
 * that was stopped (SIGSTOP) executes nothing while it is: `count` is of runs that overlapped
 * another while both processes ran; `beside` adds those that only overlapped a stopped one.
 */
function overlaps(entries: readonly LogEntry[], kills: readonly Kill[], pauses: readonly Pause[]) {
  const killedAt = new Map(kills.map((kill) => [kill.pid, kill.at]));
  const runs: { span: Span; pid: number }[] = [];
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
    runs.push({ span: { from: entry.at, to: to ?? Number.POSITIVE_INFINITY }, pid: entry.pid });
  });
  const live = runs.map((run) =>
    outside(
      run.span,
      pauses.filter((pause) => pause.pid === run.pid),
    ),
  );
  const count = overlapping(live);
  const beside = overlapping(runs.map((run) => [run.span])) - count;
  return { count, beside: Math.max(0, beside), open, killed, runs: runs.length };
}

/** Reads the history and the handler log and counts. */
export async function checkCluster(input: CheckInput) {
  const { world, size } = input;
  const { kills } = input.bots;
  const { fates, eventOf } = input.network;
  const log = input.bots.log.filter((entry) => entry.event === 'start' || entry.event === 'end');
  // When each delivery first reached a bot that knew of it: one that answered it, or one never
  // killed (a process killed before it answered may have died before taking it in), by webhook id.
  const killedPids = new Set(kills.map((kill) => kill.pid));
  const answered = new Set(
    input.bots.log
      .filter((entry) => entry.event === 'responded')
      .map((entry) => `${entry.pid} ${entry.webhookId}`),
  );
  const reached = new Map<string, number>();
  for (const entry of input.bots.log) {
    if (entry.event !== 'received' || !entry.webhookId || reached.has(entry.webhookId)) continue;
    if (killedPids.has(entry.pid) && !answered.has(`${entry.pid} ${entry.webhookId}`)) continue;
    reached.set(entry.webhookId, entry.at);
  }
  const reachedAt = (c: number, k: number) => reached.get(eventOf.get(`c${c} m${k}`) ?? '');
  let answeredOnce = 0;
  let missing = 0;
  let doubled = 0;
  let cut = 0;
  let interrupted = 0;
  let interleaved = 0;
  let outOfOrder = 0;
  let undelivered = 0;
  let overlappingRuns = 0;
  let besideFrozen = 0;
  let openRuns = 0;
  let killedRuns = 0;
  let handlerRuns = 0;
  const problems: string[] = [];
  const unanswered: string[] = [];
  const received = world.mock.deliveries.filter((d) => d.type === 'message.received');
  // The attempts at delivering message k of conversation c, as `attempt:status` (for the details).
  const attempts = (c: number, k: number) => describe(`c${c} m${k}`);
  const describe = (text: string) => {
    const id = eventOf.get(text);
    const tried = received
      .filter((d) => d.event_id === id)
      .map((d) => `${d.attempt}:${d.status ?? d.error ?? '-'}`);
    // A first attempt answered 502 on a network that delivered it: the bot died holding the request.
    return ` (${text} ${id}: first delivery ${fates.get(id ?? '') ?? '?'}, attempts ${tried.join(' ')})`;
  };
  // A late message is owed its place when it reached a bot no later than GAP_WAIT_MS after the one
  // answered before it did: the bot had it in time to answer it first.
  const owed = (c: number, early: number, late: number) => {
    const earlyAt = reachedAt(c, early);
    const lateAt = reachedAt(c, late);
    return earlyAt !== undefined && lateAt !== undefined && earlyAt <= lateAt + GAP_WAIT_MS;
  };
  const answeredTexts = new Set<string>();
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
      if (n > 0) answeredTexts.add(`c${c} m${k}`);
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
      // Excused only when each late one reached a bot more than GAP_WAIT_MS after every message
      // answered before it that came after it (its first delivery refused, lost, or died with a bot).
      const inTime = lateOnes.some((k) =>
        order.slice(0, order.indexOf(k)).some((before) => before > k && owed(c, k, before)),
      );
      if (inTime) outOfOrder++;
      else undelivered++;
      const reachedList = order.map(
        (k) => `m${k}@${(reachedAt(c, k) ?? Number.NaN) - (input.startedAt ?? 0)}`,
      );
      problems.push(
        `- ${conversationId}${inTime ? '' : ' (late ones reached a bot only past the wait bound)'}: replies in the order m${order.join(', m')}; first reached a bot (ms) ${reachedList.join(' ')}${lateOnes.map((k) => attempts(c, k)).join('')}`,
      );
    }
    if (late !== undefined && process.env.SOAK_DEBUG) {
      const t0 = input.startedAt ?? log[0]?.at ?? 0;
      for (const e of log.filter((entry) => entry.conversationId === conversationId)) {
        problems.push(`    ${e.at - t0} ${e.pid}#${e.run} ${e.event} ${e.text}`);
      }
      problems.push(`    kills: ${kills.map((kill) => `${kill.pid}@${kill.at - t0}`).join(' ')}`);
    }
    const runs = overlaps(
      log.filter((entry) => entry.conversationId === conversationId),
      kills,
      input.bots.pauses,
    );
    besideFrozen += runs.beside;
    overlappingRuns += runs.count;
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
    overlappingRuns === 0 &&
    cut === 0 &&
    interrupted <= killedRuns;
  // What the runtime left in Redis: messages queued that no holder took, claims never settled.
  let stranded = 0;
  for (const key of await input.reader.keys(`${input.prefix}q:*`)) stranded += await input.reader.zCard(key);
  let inFlight = 0;
  for (const key of await input.reader.keys(`${input.prefix}k:dedupe:*`)) {
    if ((await input.reader.get(key)) === 'in_flight') inFlight++;
  }
  const fateCount = (fate: string) => [...fates.values()].filter((value) => value === fate).length;
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
    /** The user messages with a complete reply. */
    answeredTexts,
    /** A user message's event and its delivery attempts, for the details. */
    describe,
    counts: {
      answeredOnce,
      missing,
      doubled,
      interrupted,
      cut,
      interleaved,
      outOfOrder,
      undelivered,
      overlapping: overlappingRuns,
      besideFrozen,
      killedRuns,
      handlerRuns,
      stranded,
      inFlight,
      attempts: received.length,
    },
    problems: [...unanswered, ...problems],
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
          'cluster: replies marked interrupted (one per handler run a kill cut, at most) / left cut unmarked',
        result: `${interrupted} / ${cut} (${killedRuns} runs cut by ${kills.length} kills)`,
        goal: `<= ${killedRuns} / 0`,
        status: interrupted <= killedRuns && cut === 0 ? 'met' : 'NOT MET',
      },
      {
        measurement: 'cluster: conversations out of order / interleaved replies',
        result: `${outOfOrder} / ${interleaved}`,
        goal: '0 / 0',
        status: outOfOrder === 0 && interleaved === 0 ? 'met' : 'NOT MET',
      },
      {
        measurement: `cluster: conversations with a late reply that reached a bot only past the wait bound (${GAP_WAIT_MS / 1000} s) after the one answered before it`,
        result: `${undelivered}`,
        goal: 'info: no bot had it in time',
        status: 'info',
      },
      {
        measurement: 'cluster: handlers of one conversation running at once',
        result: `${overlappingRuns} (of ${fmt(handlerRuns)} runs)`,
        goal: '0',
        status: overlappingRuns === 0 ? 'met' : 'NOT MET',
      },
      { measurement: 'cluster: wall time', result: `${fmt(seconds, 1)} s`, goal: '', status: 'info' },
    ],
  };
}
