// Measurement 7: 1,000 concurrent streamed replies through the mock service in one process (its
// loopback door, so every reply is a real Streamable HTTP request), each checked to the character;
// and 10,000 users installing one agent, whose cost per install must not grow with the users before.
import { createMockService } from '../src/testing/index.js';
import { progress, runAsChild } from './lib/child.js';
import { markdownTable, type Outcome } from './lib/report.js';
import { fmt, median } from './lib/stats.js';
import { agentMessages, startWorld, textOf } from './lib/world.js';
import { tokens } from './reply-requests.js';

const REPLIES = Number(process.env.BENCH_REPLIES ?? 1000);
const WRITES = 40;
const CONVERSATIONS = 10;
const USERS = Number(process.env.BENCH_USERS ?? 10_000);
const USER_CHUNK = USERS / 10;

/** The text of reply `n`: its own marker, then token-like pieces, so a mix-up cannot go unseen. */
const piecesOf = (n: number) => [`[reply ${n}]`, ...tokens(WRITES, n + 1)];

/** Starts every reply at once, writes into all of them concurrently, completes them, then checks. */
export async function measureMockScale(): Promise<Outcome> {
  const world = await startWorld({ users: CONVERSATIONS });
  try {
    const before = world.mock.requests.length;
    const started = performance.now();
    const cpu = process.cpuUsage();
    let peakRss = 0;
    const watch = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 50);
    progress(`mock-scale: ${REPLIES} replies at once`);
    const results = await Promise.all(
      Array.from({ length: REPLIES }, async (_, n) => {
        const conversation = world.conversations[n % CONVERSATIONS]!;
        const reply = await world.client.messages.startReply(conversation, {}, { transport: 'stream' });
        for (const piece of piecesOf(n)) await reply.write(piece);
        const result = await reply.complete();
        return { n, transport: reply.transport, ...result };
      }),
    );
    clearInterval(watch);
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const requests = world.mock.requests.length - before;
    progress('mock-scale: checking every reply in the history');
    const expected = new Map(results.map((result) => [result.message_id, piecesOf(result.n).join('')]));
    let stored = 0;
    let exact = 0;
    for (const conversation of world.conversations) {
      for (const message of await agentMessages(world, conversation)) {
        stored += 1;
        if (message.status === 'sent' && textOf(message) === expected.get(message.id)) exact += 1;
      }
    }
    const streamed = results.filter((result) => result.transport === 'stream').length;
    const answeredExact = results.filter((result) => result.text === expected.get(result.message_id)).length;
    const allExact =
      stored === REPLIES && exact === REPLIES && answeredExact === REPLIES && expected.size === REPLIES;
    const rows: Outcome['rows'] = [
      {
        measurement: `7. mock scale, ${fmt(REPLIES)} concurrent streamed replies`,
        result: `${fmt(exact)}/${fmt(REPLIES)} exact in history, ${fmt(stored)} stored, ${fmt(requests)} requests, ${fmt(seconds, 1)} s`,
        goal: 'all exact',
        status: allExact ? ('met' as const) : ('NOT MET' as const),
      },
    ];
    const details = [
      `${fmt(REPLIES)} replies started at once over ${CONVERSATIONS} conversations, ${WRITES + 1} writes each ` +
        '(a marker naming the reply, then token-like pieces), on the `stream` transport through the loopback ' +
        'door; client, mock and server in one process.',
      '',
      markdownTable(
        [
          'Replies',
          'Stayed on stream',
          'Exact (answer)',
          'Exact (history)',
          'Messages stored',
          'Requests',
          'Wall s',
          'CPU s',
          'Peak RSS MB',
        ],
        [
          [
            fmt(REPLIES),
            fmt(streamed),
            fmt(answeredExact),
            fmt(exact),
            fmt(stored),
            fmt(requests),
            fmt(seconds, 1),
            fmt((used.user + used.system) / 1e6, 1),
            fmt(peakRss / 2 ** 20),
          ],
        ],
      ),
    ];
    const installs = await measureInstalls();
    rows.push(...installs.rows);
    details.push('', ...installs.details);
    return { rows, details };
  } finally {
    await world.close();
  }
}

/**
 * `mock.createUser` and `mock.installAgent` for USERS users of one seeded agent, timed in ten chunks:
 * an install that looked through every conversation made the last chunks several times the first.
 */
async function measureInstalls(): Promise<Outcome> {
  progress(`mock-scale: ${fmt(USERS)} users install one agent`);
  const mock = createMockService();
  const { agent } = await mock.seed();
  const chunks: number[] = [];
  const started = performance.now();
  for (let chunk = 0; chunk < 10; chunk++) {
    const begun = performance.now();
    for (let i = 0; i < USER_CHUNK; i++) {
      const { user } = mock.createUser({ display_name: `User ${chunk * USER_CHUNK + i}` });
      mock.installAgent({ user_id: user.id, agent_id: agent.id });
    }
    chunks.push(performance.now() - begun);
  }
  const seconds = (performance.now() - started) / 1000;
  // The three last chunks against the three first (medians), so one collection does not decide.
  const growth = median(chunks.slice(-3)) / median(chunks.slice(0, 3));
  return {
    rows: [
      {
        measurement: `7. mock scale, ${fmt(USERS)} users install one agent`,
        result: `${fmt(seconds, 2)} s; the last ${fmt(USER_CHUNK)} took ${fmt(growth, 2)}x the first`,
        goal: '<= 2x (no scan per install)',
        status: growth <= 2 ? 'met' : 'NOT MET',
      },
    ],
    details: [
      `${fmt(USERS)} \`mock.createUser\` + \`mock.installAgent\` in process, one seeded agent, timed in chunks of ` +
        `${fmt(USER_CHUNK)} (ms): ${chunks.map((ms) => fmt(ms, 0)).join(', ')}.`,
    ],
  };
}

runAsChild(import.meta.url, measureMockScale);
