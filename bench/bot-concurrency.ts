// Measurement 8: what per-conversation order costs. Deliveries per CPU-second through `bot.fetch`
// with the 'queue' policy (conversation lock and queue in the memory store) vs 'concurrent' (no
// lock), the same signed message.received deliveries, 16 in flight over 50 conversations. The
// handler does nothing, so the bot's own work (verify, dedupe, lanes) is all that is measured. The
// bot is the built package, as users run it (BENCH_BOT_SOURCE=1: the source under tsx, whose keepNames
// helper adds an Object.defineProperty to every closure, and the lanes make more closures per delivery).
import { pathToFileURL } from 'node:url';
import * as source from '../src/index.js';
import { generateWebhookSecret, signWebhook } from '../src/testing/index.js';
import { buildPackage } from './lib/build.js';
import { progress, runAsChild } from './lib/child.js';
import { markdownTable, type Outcome } from './lib/report.js';
import { fmt, median } from './lib/stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
// 6,000: a round of 2,000 (50 ms of CPU) held one scavenge or two (10 to 15 ms each: the young
// generation grows to 64 MB here), so which it held moved a round by a quarter either way.
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 6000);
const CONVERSATIONS = 50;
const IN_FLIGHT = 16;
const POLICIES = ['concurrent', 'queue'] as const;
type Policy = (typeof POLICIES)[number];

export interface Signed {
  body: string;
  headers: Record<string, string>;
}

/** `count` signed deliveries with fresh ids, conversations round-robin, sequences rising in each. */
export async function signDeliveries(secret: string, round: string, count: number): Promise<Signed[]> {
  const signed: Signed[] = [];
  for (let i = 0; i < count; i++) {
    const conversationId = `cnv_bench${i % CONVERSATIONS}`;
    const id = `evt_${round}_${i}`;
    const body = JSON.stringify({
      schema: 'svc.event.v1',
      eventId: id,
      type: 'message.received',
      createdAt: new Date().toISOString(),
      agentId: 'agt_bench',
      conversationId,
      message: {
        id: `msg_${round}_${i}`,
        conversation_id: conversationId,
        sequence: Math.floor(i / CONVERSATIONS) + 1,
        sender: { id: 'usr_bench' },
        parts: [{ part_index: 0, type: 'text', text: `hello ${i}` }],
        fallback_text: `hello ${i}`,
        status: 'sent',
        created_at: new Date().toISOString(),
        reply_to: null,
        invoked_agents: [],
      },
    });
    signed.push({
      body,
      headers: { 'content-type': 'application/json', ...(await signWebhook({ id, payload: body, secret })) },
    });
  }
  return signed;
}

let createBot = source.createBot;

/** Microseconds of CPU per delivery through `bot.fetch` (all answered 200). */
async function cpuPerDelivery(policy: Policy, secret: string, deliveries: Signed[]): Promise<number> {
  const bot = createBot({
    apiKey: 'ams_sk_bench',
    baseUrl: 'http://127.0.0.1:9',
    webhookSecret: secret,
    concurrency: policy,
  });
  bot.on('message.received', () => undefined);
  let next = 0;
  let failed = 0;
  const before = process.cpuUsage();
  const lane = async () => {
    while (next < deliveries.length) {
      const delivery = deliveries[next++]!;
      const request = new Request('http://bot.bench/webhook', {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      });
      const response = await bot.fetch(request);
      if (response.status !== 200) failed += 1;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  await bot.idle();
  const used = process.cpuUsage(before);
  if (failed > 0) throw new Error(`${policy}: ${failed} deliveries were not answered 200`);
  return (used.user + used.system) / deliveries.length;
}

/** Both policies, rounds interleaved (the order alternates), ratios within each round. */
export async function measureBotConcurrency(): Promise<Outcome> {
  const built = process.env.BENCH_BOT_SOURCE !== '1';
  if (built) {
    const entry = (await import(pathToFileURL(await buildPackage()).href)) as typeof source;
    createBot = entry.createBot;
  }
  const secret = generateWebhookSecret();
  const samples: Record<Policy, number[]> = { concurrent: [], queue: [] };
  // One batch for every sample: each sample is a fresh bot with a fresh store, so its ids are new to
  // it. Signed once, the batch is old by the measured rounds; signed before each round, it was still
  // young there, and the round's first scavenge (about 10 ms, a sixth of a round) copied it and was
  // charged to whichever policy ran. The warm-up runs the whole batch once per policy.
  const deliveries = await signDeliveries(secret, 'bench', DELIVERIES);
  for (const policy of POLICIES) await cpuPerDelivery(policy, secret, deliveries);
  for (let round = 0; round < ROUNDS; round++) {
    progress(`bot-concurrency: round ${round + 1}/${ROUNDS}`);
    const order = round % 2 === 0 ? POLICIES : [...POLICIES].reverse();
    for (const policy of order) samples[policy].push(await cpuPerDelivery(policy, secret, deliveries));
  }
  const perSecond = (policy: Policy) => 1e6 / median(samples[policy]);
  const ratio = median(samples.queue.map((queue, i) => queue / samples.concurrent[i]!));
  const rows = [
    {
      measurement: "8. bot.fetch, 'queue' vs 'concurrent'",
      result: `${fmt(perSecond('queue'))} vs ${fmt(perSecond('concurrent'))} deliveries/CPU-s: 'queue' costs ${fmt(ratio, 2)}x`,
      goal: '<= 1.3x',
      status: ratio <= 1.3 ? ('met' as const) : ('NOT MET' as const),
    },
  ];
  const details = [
    `Median of ${ROUNDS} rounds of ${DELIVERIES} signed message.received deliveries per policy through ` +
      `\`bot.fetch\` (${IN_FLIGHT} in flight, ${CONVERSATIONS} conversations, a handler that does nothing, ` +
      'the default memory store; one signed batch for every sample, each a fresh bot); CPU of the whole ' +
      'process, signing excluded; the ratio is the median of ' +
      "the per-round ratios of CPU per delivery ('queue' over 'concurrent'). " +
      (built
        ? 'The bot runs the built package (tsup.config.ts, as published).'
        : 'The bot runs the source under tsx (BENCH_BOT_SOURCE=1).'),
    '',
    markdownTable(
      ['Policy', 'µs CPU/delivery', 'deliveries per CPU-second'],
      POLICIES.map((policy) => [policy, fmt(median(samples[policy]), 1), fmt(perSecond(policy))]),
    ),
  ];
  return { rows, details };
}

runAsChild(import.meta.url, measureBotConcurrency);
