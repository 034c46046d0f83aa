// Measurement 12: what OpenTelemetry costs a delivery. CPU per delivery through `bot.handleDelivery`
// ('queue', the default memory store, a handler that does nothing) with `@opentelemetry/api` absent
// (not resolvable), present with no provider registered (the API's no-op providers answer), and
// registered with every span sampled (the SDK's tracer provider, the AsyncLocalStorage context
// manager, a processor that exports to nowhere).
//
// The cases run side by side in one process, taking turns every BLOCK deliveries, so both meet the
// same load of a shared machine: a process of its own per case let that load, and each process's own
// JIT and heap, move a case by a tenth, three times the bound measured. Each block ends with a
// scavenge counted in it, so a case pays for its own garbage: a scavenge falling at random in one
// case's block moved a round's ratio by a tenth too. The built package is loaded twice, from two
// folders; a resolve hook (in this thread) refuses `@opentelemetry/api` to the copy that plays
// "absent", as in an app that does not install it, and counts what it refused and resolved, so the
// run fails if a case is not what it says.
import { cpSync, realpathSync, rmSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as source from '../src/index.js';
import { generateWebhookSecret } from '../src/testing/index.js';
import { type Signed, signDeliveries } from './bot-concurrency.js';
import { BUILD_DIR, buildPackage } from './lib/build.js';
import { progress, runAsChild } from './lib/child.js';
import { markdownTable, type Outcome } from './lib/report.js';
import { fmt, median, percentile } from './lib/stats.js';

// The bound's ratio gets the rounds: at a load of 10 half the rounds' ratios lie within about 4% of
// their median, which then moves about 1% from run to run over 41 rounds. The registered case is
// only reported, from a quarter as many.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 41);
const REGISTERED_ROUNDS = Math.ceil(ROUNDS / 4);
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 3000);
const BLOCK = Number(process.env.BENCH_BLOCK ?? 250);
const PEER = '@opentelemetry/api';
const WITHOUT_OTEL_DIR = `${BUILD_DIR}-without-otel`;

type CreateBot = typeof source.createBot;

/** Counts of the peer's resolutions, by the copy of the package that asked. */
const peer = { refused: 0, resolved: 0 };

/** Loads the built package twice: the copy in WITHOUT_OTEL_DIR cannot resolve `@opentelemetry/api`. */
async function loadCopies(): Promise<{ absent: CreateBot; present: CreateBot }> {
  rmSync(WITHOUT_OTEL_DIR, { recursive: true, force: true });
  cpSync(BUILD_DIR, WITHOUT_OTEL_DIR, { recursive: true });
  // Modules are known by their real path (node_modules may be a link to another checkout's).
  const withoutOtel = pathToFileURL(`${realpathSync(WITHOUT_OTEL_DIR)}/`).href;
  registerHooks({
    resolve(specifier, context, next) {
      if (specifier === PEER && context.parentURL?.startsWith(withoutOtel)) {
        peer.refused++;
        throw Object.assign(new Error(`${PEER} is not installed`), { code: 'ERR_MODULE_NOT_FOUND' });
      }
      if (specifier === PEER) peer.resolved++;
      return next(specifier, context);
    },
  });
  const load = async (dir: string) =>
    ((await import(pathToFileURL(join(dir, 'index.js')).href)) as typeof source).createBot;
  return { absent: await load(WITHOUT_OTEL_DIR), present: await load(BUILD_DIR) };
}

/** Registers OpenTelemetry as an app would, with every span sampled and dropped on export. */
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

const gc = (globalThis as { gc?: (options: { type: 'minor' }) => void }).gc;

/** A fresh bot of one copy ('queue', the memory store, a handler that does nothing). */
function freshBot(createBot: CreateBot, secret: string) {
  const bot = createBot({ apiKey: 'ams_sk_bench', baseUrl: 'http://127.0.0.1:9', webhookSecret: secret });
  bot.on('message.received', () => undefined);
  return bot;
}

/**
 * One round: a fresh bot of each case answers the same deliveries, BLOCK at a time, the two taking
 * turns (who goes first alternating), each block's CPU counted to its case. The cases are measured
 * a few ms apart all through the round, so a change of the machine's load falls on both alike.
 * Answers µs of CPU per delivery of each.
 */
async function round(
  cases: readonly [CreateBot, CreateBot],
  secret: string,
  deliveries: readonly Signed[],
): Promise<[number, number]> {
  const bots = cases.map((createBot) => freshBot(createBot, secret));
  const used = [0, 0];
  for (let from = 0, block = 0; from < deliveries.length; from += BLOCK, block++) {
    for (const which of block % 2 === 0 ? [0, 1] : [1, 0]) {
      const bot = bots[which]!;
      const before = process.cpuUsage();
      for (const delivery of deliveries.slice(from, from + BLOCK)) {
        const answer = await bot.handleDelivery(delivery.body, delivery.headers);
        if (answer.status !== 200) throw new Error(`a delivery was answered ${answer.status}`);
      }
      await bot.idle();
      gc?.({ type: 'minor' });
      const after = process.cpuUsage(before);
      used[which]! += after.user + after.system;
    }
  }
  return [used[0]! / deliveries.length, used[1]! / deliveries.length];
}

/** Rounds of `absent` beside `other`: the µs per delivery of each and the ratio of each round. */
async function sideBySide(
  label: string,
  rounds: number,
  absent: CreateBot,
  other: CreateBot,
  secret: string,
  deliveries: readonly Signed[],
): Promise<{ absent: number[]; other: number[]; ratios: number[] }> {
  await round([absent, other], secret, deliveries);
  const out = { absent: [] as number[], other: [] as number[], ratios: [] as number[] };
  for (let i = 0; i < rounds; i++) {
    progress(`telemetry-cost: ${label}, round ${i + 1}/${rounds}`);
    const [absentUs, otherUs] = await round([absent, other], secret, deliveries);
    out.absent.push(absentUs);
    out.other.push(otherUs);
    out.ratios.push(otherUs / absentUs);
  }
  return out;
}

export async function measureTelemetryCost(): Promise<Outcome> {
  if (!gc) throw new Error('telemetry-cost runs with node --expose-gc (bench/run.ts passes it)');
  await buildPackage();
  const { absent, present } = await loadCopies();
  const secret = generateWebhookSecret();
  // The same deliveries in every round: each round has fresh bots, each with a fresh memory store.
  const deliveries = await signDeliveries(secret, 'telemetry', DELIVERIES);
  const unregistered = await sideBySide('unregistered', ROUNDS, absent, present, secret, deliveries);
  if (peer.refused === 0 || peer.resolved === 0) {
    throw new Error(`the copies did not load as the cases say (${JSON.stringify(peer)})`);
  }
  await registerSampledProvider();
  const registered = await sideBySide('registered', REGISTERED_ROUNDS, absent, present, secret, deliveries);
  const ratio = median(unregistered.ratios);
  const spread = (ratios: number[]) =>
    `${fmt(percentile(ratios, 25), 3)}x to ${fmt(percentile(ratios, 75), 3)}x`;
  return {
    rows: [
      {
        measurement: '12. Telemetry, API present but no provider',
        result: `${fmt(ratio, 3)}x the CPU per delivery of the API absent (middle half of rounds ${spread(unregistered.ratios)})`,
        goal: '<= 1.03x',
        status: ratio <= 1.03 ? 'met' : 'NOT MET',
      },
      {
        measurement: '12. Telemetry, a provider registered, every span sampled',
        result: `${fmt(median(registered.other) - median(registered.absent), 1)} µs more per delivery (${fmt(median(registered.ratios), 2)}x)`,
        goal: 'reported',
        status: 'met',
      },
    ],
    details: [
      `One process (node --expose-gc), the built package loaded twice: the copy playing 'absent' cannot ` +
        `resolve \`@opentelemetry/api\` (a resolve hook refuses it). ${ROUNDS} rounds ('registered': ${REGISTERED_ROUNDS}); in each, a fresh bot ` +
        "per case ('queue', the memory store, a handler that does nothing) answers the same " +
        `${DELIVERIES} signed message.received deliveries, awaited one by one through \`bot.handleDelivery\`, ` +
        `the two bots taking turns every ${BLOCK} deliveries (who goes first alternating), each turn ending ` +
        'with `bot.idle()` and a scavenge of the young generation counted in it. ' +
        "First 'absent' beside 'unregistered', then, with the SDK's TracerProvider, SimpleSpanProcessor " +
        "and the AsyncLocalStorage context manager registered (every span sampled, exported nowhere), 'absent' " +
        "beside 'registered'. A ratio is the median of the rounds' ratios; the middle half of them shows the noise.",
      '',
      markdownTable(
        ['Case', 'µs CPU/delivery', 'vs absent (median)', 'vs absent (middle half)'],
        [
          ['absent', fmt(median(unregistered.absent), 1), '1.000x', ''],
          [
            'unregistered',
            fmt(median(unregistered.other), 1),
            `${fmt(ratio, 3)}x`,
            spread(unregistered.ratios),
          ],
          ['absent, beside registered', fmt(median(registered.absent), 1), '1.000x', ''],
          [
            'registered',
            fmt(median(registered.other), 1),
            `${fmt(median(registered.ratios), 3)}x`,
            spread(registered.ratios),
          ],
        ],
      ),
    ],
  };
}

runAsChild(import.meta.url, measureTelemetryCost);
