// Measurement 10: webhook intake. The receiver's CPU per delivery at 16 connections (toNodeHandler(bot)
// against grammY's webhookCallback and bare node:http + standardwebhooks, all in one server process),
// and verifyWebhook alone against standardwebhooks' verify, in this process.
import { dirname } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { Pool } from 'undici';
import { verifyWebhook } from '../src/index.js';
import { signWebhook } from '../src/testing/index.js';
import { buildPackage } from './lib/build.js';
import { progress, runAsChild } from './lib/child.js';
import type { IntakeInfo } from './lib/intake-server.js';
import { closePools, serverCpuPerCall, type Target } from './lib/load.js';
import { markdownTable, type Outcome } from './lib/report.js';
import { profileChild, startServerChild } from './lib/server-child.js';
import { fmt, median, percentile } from './lib/stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
const IN_FLIGHT = 16;
const VERIFY_CALLS = 20_000;
// The tail under a wider burst: every connection of the sender busy at once.
const WIDE = 128;

/** A `message.received` delivery as the service sends it (PROTOCOL.md section 6). */
export function deliveryBody(eventId: string): string {
  const at = new Date().toISOString();
  return JSON.stringify({
    schema: 'svc.event.v1',
    eventId,
    type: 'message.received',
    createdAt: at,
    agentId: 'agt_bench',
    conversationId: 'cnv_bench',
    message: {
      id: `msg_${eventId}`,
      conversation_id: 'cnv_bench',
      sequence: 1,
      sender: { id: 'usr_bench' },
      parts: [{ part_index: 0, type: 'text', text: 'Hello, what can you do for me today?' }],
      fallback_text: 'Hello, what can you do for me today?',
      status: 'sent',
      created_at: at,
    },
  });
}

/** A Telegram update carrying the same text, for grammY. */
const telegramUpdate = (id: number) =>
  JSON.stringify({
    update_id: id,
    message: {
      message_id: id,
      date: Math.floor(Date.now() / 1000),
      chat: { id: 42, type: 'private', first_name: 'User' },
      from: { id: 42, is_bot: false, first_name: 'User' },
      text: 'Hello, what can you do for me today?',
    },
  });

let serial = 0;

/** Signed deliveries, made before the round (signing is the sender's work, not the receiver's). */
async function signedDeliveries(info: IntakeInfo, count: number) {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const id = `evt_bench_${process.pid}_${++serial}`;
      const body = deliveryBody(id);
      const headers = await signWebhook({ id, payload: body, secret: info.webhookSecret });
      return { body, headers: { 'content-type': 'application/json', ...headers } };
    }),
  );
}

const LABELS: Record<string, string> = {
  sdk: 'SDK `toNodeHandler(bot)`',
  sdkConcurrent: "SDK `toNodeHandler(bot)`, `concurrency: 'concurrent'` (no lanes)",
  grammy: "grammY `webhookCallback(bot, 'http')`",
  standardwebhooks: 'bare node:http + `standardwebhooks` verify',
  floor: 'floor: bare node:http + node:crypto HMAC + JSON.parse, by hand',
};

/** verifyWebhook and standardwebhooks' verify on the same delivery: µs of CPU per call for each. */
async function verifyAlone(secret: string): Promise<{ sdk: number; standard: number }> {
  const id = 'evt_verify';
  const body = deliveryBody(id);
  const headers = await signWebhook({ id, payload: body, secret });
  const standard = new Webhook(secret);
  const timed = async (run: () => unknown) => {
    const before = process.cpuUsage();
    for (let i = 0; i < VERIFY_CALLS; i++) await run();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / VERIFY_CALLS;
  };
  return {
    sdk: await timed(() => verifyWebhook(body, headers, { secret })),
    standard: await timed(() => standard.verify(body, headers)),
  };
}

// The WIDE-connection pools, by origin: opened and warmed once, so a round's tail is the receiver's,
// not 128 TCP handshakes.
const widePools = new Map<string, Pool>();

/** Sends `calls` requests over `WIDE` connections at once and answers each one's wall time, in ms. */
async function latencies(target: Target, calls: number): Promise<number[]> {
  let pool = widePools.get(target.origin);
  if (!pool) {
    pool = new Pool(target.origin, { connections: WIDE, pipelining: 1 });
    widePools.set(target.origin, pool);
  }
  const requests = Array.from({ length: calls }, (_, i) => target.request(i));
  const times: number[] = [];
  let next = 0;
  const lane = async () => {
    while (next < calls) {
      const request = requests[next++]!;
      const start = performance.now();
      const answer = await pool.request(request);
      const text = await answer.body.text();
      times.push(performance.now() - start);
      if (answer.statusCode !== target.expectStatus) {
        throw new Error(
          `${target.origin}${request.path} answered ${answer.statusCode}: ${text.slice(0, 200)}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: WIDE }, lane));
  return times;
}

export async function measureWebhookIntake(): Promise<Outcome> {
  // The receiver runs the built package, as users do (BENCH_INTAKE_SOURCE=1: the source under tsx).
  if (process.env.BENCH_INTAKE_SOURCE !== '1') {
    process.env.BENCH_INTAKE_DIST = dirname(await buildPackage());
  }
  const server = await startServerChild<IntakeInfo>('lib/intake-server.ts', ['--expose-gc']);
  try {
    const { info } = server;
    const origin = (port: number) => `http://127.0.0.1:${port}`;
    const targets = async (): Promise<Record<string, Target>> => {
      const signed = await signedDeliveries(info, CALLS);
      const firstUpdate = ++serial * CALLS;
      const delivery = (port: number): Target => ({
        origin: origin(port),
        expectStatus: 200,
        request: (i) => ({ path: '/webhook', method: 'POST', ...signed[i]! }),
      });
      return {
        sdk: delivery(info.ports.sdk),
        sdkConcurrent: delivery(info.ports.sdkConcurrent),
        grammy: {
          origin: origin(info.ports.grammy),
          expectStatus: 200,
          request: (i) => ({
            path: '/webhook',
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-telegram-bot-api-secret-token': info.telegramSecret,
            },
            body: telegramUpdate(firstUpdate + i),
          }),
        },
        standardwebhooks: delivery(info.ports.standardwebhooks),
        floor: delivery(info.ports.floor),
      };
    };
    const names = Object.keys(LABELS);
    const samples = new Map<string, number[]>(names.map((name) => [name, []]));
    const verify: { sdk: number[]; standard: number[] } = { sdk: [], standard: [] };
    const tails: { sdk: number[]; grammy: number[] } = { sdk: [], grammy: [] };
    // Warm-up: every receiver and the verify loop, not counted.
    const warm = await targets();
    for (const name of names) await serverCpuPerCall(server, warm[name]!, CALLS, IN_FLIGHT, 'gc-young');
    await verifyAlone(info.webhookSecret);
    const warmWide = await targets();
    for (const name of ['sdk', 'grammy'] as const) await latencies(warmWide[name]!, CALLS);
    for (let round = 0; round < ROUNDS; round++) {
      progress(`webhook-intake: round ${round + 1}/${ROUNDS}`);
      const round_ = await targets();
      const order = names.map((_, i) => names[(i + round) % names.length]!);
      for (const name of order) {
        samples.get(name)!.push(await serverCpuPerCall(server, round_[name]!, CALLS, IN_FLIGHT, 'gc-young'));
      }
      // The tail at WIDE connections, the SDK and grammY in turn (first one, then the other, by round).
      const wide = await targets();
      for (const name of round % 2 === 0 ? (['sdk', 'grammy'] as const) : (['grammy', 'sdk'] as const)) {
        tails[name].push(percentile(await latencies(wide[name]!, CALLS), 99));
      }
      const alone = await verifyAlone(info.webhookSecret);
      verify.sdk.push(alone.sdk);
      verify.standard.push(alone.standard);
    }
    const us = (name: string) => median(samples.get(name)!);
    const paired = (name: string, base: string) =>
      median(samples.get(name)!.map((value, i) => value / samples.get(base)![i]!));
    const toGrammy = paired('sdk', 'grammy');
    const verifyRatio = median(verify.sdk.map((value, i) => value / verify.standard[i]!));
    const tailRatio = median(tails.sdk.map((value, i) => value / tails.grammy[i]!));
    const rows: Outcome['rows'] = [
      {
        measurement: `10. webhook intake, ${IN_FLIGHT} connections`,
        result:
          `${fmt(us('sdk'), 1)} µs CPU/delivery: ${fmt(toGrammy, 2)}x grammY, ` +
          `${fmt(paired('sdk', 'standardwebhooks'), 2)}x bare node:http + standardwebhooks ` +
          `('concurrent': ${fmt(paired('sdkConcurrent', 'grammy'), 2)}x grammY; ` +
          `the hand-written floor: ${fmt(paired('floor', 'grammy'), 2)}x grammY)`,
        goal: '<= 1.5x grammY',
        status: toGrammy <= 1.5 ? 'met' : 'NOT MET',
      },
      {
        measurement: `10. webhook intake, ${WIDE} connections, p99`,
        result: `${fmt(median(tails.sdk), 1)} ms: ${fmt(tailRatio, 2)}x grammY (${fmt(median(tails.grammy), 1)} ms)`,
        goal: '<= grammY',
        status: tailRatio <= 1 ? 'met' : 'NOT MET',
      },
      {
        measurement: '10. `verifyWebhook` alone',
        result: `${fmt(median(verify.sdk), 1)} µs CPU/call: ${fmt(verifyRatio, 2)}x standardwebhooks (${fmt(median(verify.standard), 1)} µs)`,
        goal: '<= 2x standardwebhooks',
        status: verifyRatio <= 2 ? 'met' : 'NOT MET',
      },
    ];
    const details = [
      `Receiver CPU: median of ${ROUNDS} rounds of ${CALLS} deliveries per receiver over ${IN_FLIGHT} keep-alive ` +
        'connections (undici Pool in this process); the receivers share one server process, whose CPU ' +
        "(user + system) is read before and after each receiver's turn; each turn ends with a scavenge of " +
        'the young generation (node --expose-gc), counted in it, so a receiver pays for its own garbage and ' +
        'what it keeps, not for what the receiver before it left; ratios are taken within each round. ' +
        'Each receiver has one handler that does nothing. The SDK and standardwebhooks get the same signed ' +
        '`message.received` delivery with a fresh webhook-id; grammY gets a Telegram update with the same ' +
        'text and its secret-token header. All 16 connections deliver to one conversation, so under the ' +
        "default 'queue' the deliveries wait on each other's lock. The floor is the least a Standard " +
        'Webhooks receiver must do, by hand on node:http (read the body, HMAC with node:crypto, compare ' +
        'in constant time, JSON.parse, answer): grammY checks a secret token instead of a signature. ' +
        (process.env.BENCH_INTAKE_DIST
          ? 'The SDK receivers run the built package (tsup.config.ts, as published).'
          : 'The SDK receivers run the source under tsx (BENCH_INTAKE_SOURCE=1).'),
      '',
      markdownTable(
        ['Receiver', 'µs CPU/delivery', 'vs grammY'],
        names.map((name) => [LABELS[name]!, fmt(us(name), 1), `${fmt(paired(name, 'grammy'), 2)}x`]),
      ),
      '',
      `p99 at ${WIDE} connections: each round, ${CALLS} deliveries to the SDK ` +
        "(`'queue'`) and to grammY over a pool of that many connections (opened and warmed before the " +
        'first round), all in flight at once; the ' +
        'wall time of each from its send to its answer read, in the bench process; the median of the ' +
        `rounds' p99s (SDK ${tails.sdk.map((v) => fmt(v, 1)).join(', ')} ms; ` +
        `grammY ${tails.grammy.map((v) => fmt(v, 1)).join(', ')} ms).`,
      '',
      `\`verifyWebhook\` alone: ${VERIFY_CALLS.toLocaleString('en-US')} verifications of the same delivery per round, ` +
        `in the bench process; ${fmt(median(verify.sdk), 1)} µs against standardwebhooks' ` +
        `${fmt(median(verify.standard), 1)} µs (the SDK also checks the event's shape with its schema).`,
    ];
    if (toGrammy > 1.5) {
      progress('webhook-intake: a goal is missed: profiling the receiver');
      const profiled = await targets();
      details.push(
        '',
        ...(await profileChild(
          server,
          `\`node:inspector\` in the receiver process, ${CALLS} deliveries to toNodeHandler(bot)`,
          () => serverCpuPerCall(server, profiled.sdk!, CALLS, IN_FLIGHT),
        )),
      );
    }
    return { rows, details };
  } finally {
    await closePools();
    await Promise.all([...widePools.values()].map((pool) => pool.close()));
    widePools.clear();
    await server.close();
  }
}

runAsChild(import.meta.url, measureWebhookIntake);
