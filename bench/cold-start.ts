// Measurement 4: whole-process time of importing the built package and constructing a client,
// against `node -e 0` and against importing and constructing openai-node and grammY, in the same run.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { BUILD_DIR, buildPackage } from './lib/build.js';
import { progress, ROOT, runAsChild } from './lib/child.js';
import { markdownTable, type Outcome } from './lib/report.js';
import { fmt, median } from './lib/stats.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 31);

const importing = (file: string) =>
  `const { AgentClient } = await import(${JSON.stringify(pathToFileURL(file).href)}); new AgentClient({ apiKey: 'ams_sk_cold', baseUrl: 'http://127.0.0.1:9' });`;
// The same, then one messages.send to a closed port: the first call loads Node's fetch.
const calling = (file: string) =>
  `const { AgentClient } = await import(${JSON.stringify(pathToFileURL(file).href)}); const client = new AgentClient({ apiKey: 'ams_sk_cold', baseUrl: 'http://127.0.0.1:9', maxRetries: 0 }); await client.messages.send('cnv_cold', { text: 'cold' }).catch(() => {});`;
// Each process reports its own CPU time (user + system, all threads) as it exits, on stderr.
const REPORT_CPU =
  "process.on('exit', () => { const u = process.cpuUsage(); process.stderr.write('@@cpu ' + (u.user + u.system)); });";
const esm = (code: string) => ['--input-type=module', '-e', `${REPORT_CPU} ${code}`];
const cjs = (code: string) => ['-e', `${REPORT_CPU} ${code}`];

/** The processes timed: each imports its library and constructs a client, nothing more. */
function programs(entry: string): Record<string, string[]> {
  const openai = `const { default: OpenAI } = await import('openai'); new OpenAI({ apiKey: 'sk-cold', baseURL: 'http://127.0.0.1:9' });`;
  const grammy = `const { Bot } = await import('grammy'); new Bot('1:cold');`;
  return {
    'node -e 0': cjs('0'),
    'agent-messaging': esm(importing(entry)),
    openai: esm(openai),
    grammY: esm(grammy),
  };
}

/** Where the time of the SDK's import goes: its dependencies alone, and a what-if build. */
function breakdown(entry: string, single: string): Record<string, string[]> {
  return {
    'agent-messaging, then a first call (refused)': esm(calling(entry)),
    "import('zod')": esm("await import('zod');"),
    "import('ky')": esm("await import('ky');"),
    'new Request() (what ky does on import)': cjs("new Request('https://empty.invalid')"),
    'what-if: SDK and its dependencies in one file': esm(importing(single)),
  };
}

/** The built entry with every dependency bundled in, to show what fewer modules to compile would save. */
async function bundleSingle(entry: string): Promise<string> {
  const outfile = join(BUILD_DIR, '..', 'single-file.mjs');
  await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'node',
    outfile,
    logLevel: 'error',
  });
  return outfile;
}

/** Wall-clock milliseconds from spawn to exit, and the CPU milliseconds the process reported. */
function timeRun(args: string[]): { wall: number; cpu: number } {
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  const wall = Number(process.hrtime.bigint() - started) / 1e6;
  const cpu = /@@cpu (\d+)/.exec(String(run.stderr));
  if (run.status !== 0 || cpu === null) throw new Error(`node ${args.join(' ')} failed: ${run.stderr}`);
  return { wall, cpu: Number(cpu[1]) / 1000 };
}

/** Runs the three programs `RUNS` times, interleaved, and compares their medians. */
export async function measureColdStart(): Promise<Outcome> {
  progress('cold-start: building the package');
  const entry = await buildPackage();
  const runs = { ...programs(entry), ...breakdown(entry, await bundleSingle(entry)) };
  const names = Object.keys(runs);
  const samples = new Map<string, { wall: number; cpu: number }[]>(names.map((name) => [name, []]));
  for (const name of names) timeRun(runs[name]!); // warm the file cache
  for (let i = 0; i < RUNS; i++) {
    if (i % 5 === 0) progress(`cold-start: run ${i + 1}/${RUNS}`);
    for (const name of names) samples.get(name)!.push(timeRun(runs[name]!));
  }
  const ms = (name: string) => median(samples.get(name)!.map((sample) => sample.wall));
  const cpuMs = (name: string) => median(samples.get(name)!.map((sample) => sample.cpu));
  const base = ms('node -e 0');
  const [sdk, openai] = [ms('agent-messaging'), ms('openai')];
  // Each run's processes ran back to back: compare within the run, then take the median.
  const paired = (name: string, peer = 'openai') => {
    const own = samples.get(name)!;
    const node = samples.get('node -e 0')!;
    const other = samples.get(peer)!;
    return median(own.map((sample, i) => (sample.wall - node[i]!.wall) / (other[i]!.wall - node[i]!.wall)));
  };
  // CPU time is steadier than wall time on a shared machine; the goal against grammY is judged on it.
  const pairedCpu = (name: string, peer: string) => {
    const own = samples.get(name)!;
    const other = samples.get(peer)!;
    return median(own.map((sample, i) => sample.cpu / other[i]!.cpu));
  };
  const toOpenai = paired('agent-messaging');
  const toGrammy = pairedCpu('agent-messaging', 'grammY');
  const grammy = ms('grammY');
  const rows = [
    {
      measurement: '4. cold start, import + construct',
      result: `${fmt(sdk, 1)} ms (+${fmt(sdk - base, 1)} over node -e 0), openai ${fmt(openai, 1)} ms (+${fmt(openai - base, 1)}): ${fmt(toOpenai, 2)}x openai's import time`,
      goal: 'lower than openai',
      status: toOpenai < 1 ? ('met' as const) : ('NOT MET' as const),
    },
    {
      measurement: '4. cold start vs grammY',
      result: `${fmt(cpuMs('agent-messaging'), 1)} ms CPU, grammY ${fmt(cpuMs('grammY'), 1)} ms CPU: ${fmt(toGrammy, 2)}x grammY (wall ${fmt(sdk, 1)} against ${fmt(grammy, 1)} ms: ${fmt(paired('agent-messaging', 'grammY'), 2)}x over node)`,
      goal: "<= grammY's",
      status: toGrammy <= 1 ? ('met' as const) : ('NOT MET' as const),
    },
  ];
  const details = [
    `Median of ${RUNS} runs of each process, interleaved: wall-clock from spawn to exit (the goal; the ` +
      'ratio to openai is over `node -e 0`, taken within each run, then the median), and the ' +
      'CPU time the process reported at exit (steadier on a shared machine). The SDK is a fresh build of ' +
      'this checkout (tsup.config.ts), openai the devDependency.',
    '',
    markdownTable(
      ['Process', 'Wall ms', 'Over `node -e 0`', 'vs openai (over node)', 'CPU ms', 'CPU vs grammY'],
      names.map((name) => [
        name,
        fmt(ms(name), 1),
        fmt(ms(name) - base, 1),
        name === 'node -e 0' ? '' : `${fmt(paired(name), 2)}x`,
        fmt(cpuMs(name), 1),
        `${fmt(pairedCpu(name, 'grammY'), 2)}x`,
      ]),
    ),
    '',
    'The last five rows: the same import and construction followed by one `messages.send` to a closed ' +
      "port (the call loads Node's fetch); then the import broken down: each dependency alone (from " +
      "node_modules, as a consumer importing it would load it), the `Request` construction that ky's " +
      "`supportsRequestStreams` check makes at import (it loads Node's fetch internals), and the build " +
      'bundled once more into one file. The package bundles ky, zod and eventsource-parser itself ' +
      '(tsup.config.ts), so none of the 64 zod locale files is loaded.',
  ];
  return { rows, details };
}

runAsChild(import.meta.url, measureColdStart);
