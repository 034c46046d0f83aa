// Measurement 12: what OpenTelemetry costs a delivery. CPU per delivery through `bot.fetch` ('queue',
// the default memory store, a handler that does nothing) in three processes of their own:
// `@opentelemetry/api` absent (not resolvable), present with no provider registered (the API's no-op
// tracer answers), and registered with every span sampled (the SDK's tracer provider, the
// AsyncLocalStorage context manager, a processor that exports to nowhere). Rounds alternate the order;
// ratios are taken within each round against the absent case.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as source from '../src/index.js';
import { generateWebhookSecret } from '../src/testing/index.js';
import { type Signed, signDeliveries } from './bot-concurrency.js';
import { BUILD_DIR, buildPackage } from './lib/build.js';
import { isEntry, progress, ROOT, runAsChild } from './lib/child.js';
import { markdownTable, type Outcome } from './lib/report.js';
import { fmt, median } from './lib/stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 3000);
const CASES = ['absent', 'unregistered', 'registered'] as const;
type Case = (typeof CASES)[number];
const MARK = '@@cost ';

/** In a child: registers OpenTelemetry as an app would, with every span sampled and dropped on export. */
async function registerSampledProvider(): Promise<void> {
  const { context, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { SimpleSpanProcessor, TracerProvider } = await import('@opentelemetry/sdk-trace');
  const exporter = {
    export: (_spans: unknown, done: (result: { code: number }) => void) => done({ code: 0 }),
    shutdown: async () => {},
  };
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(
    new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
  );
}

/** In a child: µs of CPU per delivery over one pass after a warm-up pass, each a fresh bot. */
async function measureCase(which: Case): Promise<number> {
  // The parent built the package once, before the first case.
  const { createBot } = (await import(pathToFileURL(join(BUILD_DIR, 'index.js')).href)) as typeof source;
  if (which === 'registered') await registerSampledProvider();
  const secret = generateWebhookSecret();
  const deliveries = await signDeliveries(secret, which, DELIVERIES);
  const pass = async (batch: Signed[]) => {
    const bot = createBot({ apiKey: 'ams_sk_bench', baseUrl: 'http://127.0.0.1:9', webhookSecret: secret });
    bot.on('message.received', () => undefined);
    const before = process.cpuUsage();
    for (const delivery of batch) {
      const answer = await bot.handleDelivery(delivery.body, delivery.headers);
      if (answer.status !== 200) throw new Error(`${which}: a delivery was answered ${answer.status}`);
    }
    await bot.idle();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / batch.length;
  };
  await pass(deliveries);
  return pass(await signDeliveries(secret, `${which}-measured`, DELIVERIES));
}

/** Runs one case in a fresh node and answers its µs per delivery. */
function runCase(which: Case): Promise<number> {
  const flags = which === 'absent' ? ['--import', './bench/lib/without-otel.mjs'] : [];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...flags, '--import', 'tsx', 'bench/telemetry-cost.ts', which], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = output.split('\n').find((candidate) => candidate.startsWith(MARK));
      if (line === undefined) reject(new Error(`telemetry-cost ${which} exited with ${code} and no figure`));
      else resolve(Number(line.slice(MARK.length)));
    });
  });
}

export async function measureTelemetryCost(): Promise<Outcome> {
  await buildPackage();
  const samples: Record<Case, number[]> = { absent: [], unregistered: [], registered: [] };
  for (let round = 0; round < ROUNDS; round++) {
    progress(`telemetry-cost: round ${round + 1}/${ROUNDS}`);
    const order = round % 2 === 0 ? CASES : [...CASES].reverse();
    for (const which of order) samples[which].push(await runCase(which));
  }
  const against = (which: Case) => median(samples[which].map((value, i) => value / samples.absent[i]!));
  const unregistered = against('unregistered');
  const registered = against('registered');
  return {
    rows: [
      {
        measurement: '12. Telemetry, API present but no provider',
        result: `${fmt(unregistered, 3)}x the CPU per delivery of the API absent`,
        goal: '<= 1.03x',
        status: unregistered <= 1.03 ? 'met' : 'NOT MET',
      },
      {
        measurement: '12. Telemetry, a provider registered, every span sampled',
        result: `${fmt(median(samples.registered) - median(samples.absent), 1)} µs more per delivery (${fmt(registered, 2)}x)`,
        goal: 'reported',
        status: 'met',
      },
    ],
    details: [
      `Median of ${ROUNDS} rounds; each case in a node process of its own, a warm-up pass then ` +
        `${DELIVERIES} signed message.received deliveries awaited one by one through \`bot.handleDelivery\` ` +
        "('queue', the memory store, a handler that does nothing; the built package). 'absent' cannot " +
        "resolve `@opentelemetry/api` (bench/lib/without-otel.mjs); 'registered' samples every span with the " +
        "SDK's TracerProvider, SimpleSpanProcessor and the AsyncLocalStorage context manager, exporting nowhere.",
      '',
      markdownTable(
        ['Case', 'µs CPU/delivery', 'vs absent'],
        CASES.map((which) => [which, fmt(median(samples[which]), 1), `${fmt(against(which), 3)}x`]),
      ),
    ],
  };
}

const which = process.argv[2] as Case | undefined;
if (isEntry(import.meta.url) && which !== undefined) {
  measureCase(which).then(
    (us) => {
      process.stdout.write(`${MARK}${us}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
} else {
  runAsChild(import.meta.url, measureTelemetryCost);
}
