// Measurement 3: a streamed reply of 1,000 writes, on the `stream` and `append` transports: requests
// per reply (the mock's request log) and the time from write() to the patch that acknowledges it
// (seen by a second stream of the same message, which the service lets follow the message live).
import { progress, runAsChild } from './lib/child.js';
import { markdownTable, type Outcome, type Row } from './lib/report.js';
import { fmt, median, percentile, seededRandom } from './lib/stats.js';
import { agentMessages, startWorld, textOf, type World } from './lib/world.js';

const WRITES = 1000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PACED_MS = 5;
const WORDS = [
  ' the',
  ' weather',
  ' is',
  ' sunny',
  ' in',
  ' Zürich',
  ',',
  ' 21',
  '°C',
  ' 🌤',
  ' and',
  ' tomorrow',
  '.',
];

/** 1,000 token-like pieces, the same for every run. */
export function tokens(count = WRITES, seed = 3): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => WORDS[Math.floor(random() * WORDS.length)]!);
}

interface ReplyRun {
  requests: number;
  chars: number;
  latencies: number[];
}

/** Writes the pieces into one reply while an observer stream times each write's acknowledgement. */
async function writeReply(
  world: World,
  transport: 'stream' | 'append',
  pacedMs: number,
  key: string,
): Promise<ReplyRun> {
  const pieces = tokens();
  const written = pieces.join('');
  const conversation = world.conversations[0]!;
  const before = world.mock.requests.length;
  const reply = await world.client.messages.startReply(conversation, {}, { transport, idempotencyKey: key });
  // The same key and body replay the start: a stream that follows the message live (PROTOCOL.md 4).
  const observerEntry = world.mock.requests.length;
  const observer = await world.client.messages.stream(conversation, {}, { idempotencyKey: key });
  const acks: { at: number; chars: number }[] = [];
  const observing = (async () => {
    let chars = 0;
    for await (const event of observer) {
      if (event.type === 'message.started') chars = event.message.content[0]?.text?.length ?? 0;
      if (event.type === 'message.patch') {
        chars += event.patch.value.length;
        acks.push({ at: performance.now(), chars });
      }
    }
  })();
  const sentAt: { at: number; chars: number }[] = [];
  let chars = 0;
  for (const piece of pieces) {
    chars += piece.length;
    sentAt.push({ at: performance.now(), chars });
    await reply.write(piece);
    if (pacedMs > 0) await new Promise((resolve) => setTimeout(resolve, pacedMs));
  }
  const result = await reply.complete();
  await observing;
  if (result.text !== written) throw new Error(`${transport}: the reply holds other text than was written`);
  const requests = world.mock.requests.slice(before).filter((_, i) => before + i !== observerEntry);
  const latencies = sentAt.map(({ at, chars: upTo }) => {
    const ack = acks.find((candidate) => candidate.chars >= upTo);
    if (ack === undefined) throw new Error(`${transport}: a write was never acknowledged`);
    return ack.at - at;
  });
  return { requests: requests.length, chars: written.length, latencies };
}

/** Both transports, back-to-back writes (rounds) and writes paced 5 ms apart (one run each). */
export async function measureReplies(): Promise<Outcome> {
  const world = await startWorld();
  try {
    const rows: Row[] = [];
    const lines: string[][] = [];
    let runs = 0;
    for (const transport of ['stream', 'append'] as const) {
      for (const pacedMs of [0, PACED_MS]) {
        const results: ReplyRun[] = [];
        for (let round = 0; round < (pacedMs === 0 ? ROUNDS : 1); round++) {
          progress(
            `replies (${transport}, ${pacedMs ? `paced ${pacedMs} ms` : 'back-to-back'}): run ${round + 1}`,
          );
          results.push(await writeReply(world, transport, pacedMs, `bench-reply-${process.pid}-${++runs}`));
        }
        const chars = results[0]!.chars;
        const requests = Math.max(...results.map((run) => run.requests));
        const p50 = median(results.map((run) => median(run.latencies)));
        const p95 = median(results.map((run) => percentile(run.latencies, 95)));
        const budget = transport === 'stream' ? 1 : Math.ceil(chars / 256) + 2;
        const pace = pacedMs ? `paced ${pacedMs} ms` : 'back-to-back';
        lines.push([transport, pace, fmt(chars), fmt(requests), fmt(budget), fmt(p50, 1), fmt(p95, 1)]);
        if (pacedMs === 0) {
          rows.push({
            measurement: `3. reply requests, ${transport}`,
            result: `${requests} request${requests === 1 ? '' : 's'} for ${WRITES} writes (${fmt(chars)} chars); write to ack p50 ${fmt(p50, 1)} ms`,
            goal: transport === 'stream' ? '1 request' : `<= ceil(chars/256)+2 = ${budget}`,
            status: requests <= budget ? 'met' : 'NOT MET',
          });
        }
      }
    }
    // Every reply is in the history with exactly the written text.
    const text = tokens().join('');
    const stored = await agentMessages(world, world.conversations[0]!);
    if (stored.length !== runs || stored.some((message) => textOf(message) !== text)) {
      throw new Error('the history does not hold every reply with exactly its text');
    }
    const details = [
      `${WRITES} writes of token-like pieces per reply, through the loopback door; requests counted in the ` +
        "mock's request log (the observer stream left out). Latency: from calling write() to the " +
        'message.patch whose applied text covers it, p50 and p95 (median over runs). The coalescing ' +
        'defaults apply (256 characters or 100 ms). Every reply was checked in the history afterwards.',
      '',
      markdownTable(
        ['Transport', 'Writes', 'Chars', 'Requests', 'Goal', 'Write→ack p50 ms', 'p95 ms'],
        lines,
      ),
      '',
      `Paced writes (one every ${PACED_MS} ms, about 200 tokens/s) fill 256 characters more slowly than the ` +
        '100 ms timer fires, so `append` then sends one request per 100 ms, by design; the goal is about ' +
        'the character threshold and is judged on back-to-back writes.',
    ];
    return { rows, details };
  } finally {
    await world.close();
  }
}

runAsChild(import.meta.url, measureReplies);
