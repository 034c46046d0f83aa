// Where the time goes when a goal is missed. A workload profiles only the SDK's side of a
// measurement, with `node:inspector` started after its setup, in a fresh process:
// `node --import tsx bench/profile.ts <workload>` prints the summary as markdown.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEntry, ROOT } from './lib/child.js';
import { type Hot, type Profile, summarize, summarizeProfile } from './lib/cpu-profile.js';
import { markdownTable } from './lib/report.js';

/** A workload: its setup (not profiled) answers the part that is. */
type Workload = () => Promise<() => Promise<void>>;

/** The workloads that can be profiled, by name. */
export const WORKLOADS: Record<string, Workload> = {
  'stream-read': async () => {
    const { readWithSdk } = await import('./stream-read.js');
    const { recordStream } = await import('./lib/recorded-stream.js');
    const recording = recordStream({ bytes: 20 * 1024 * 1024, patch: 'token' });
    await readWithSdk(recording);
    return async () => {
      for (let i = 0; i < 6; i++) await readWithSdk(recording);
    };
  },
  send: async () => {
    const { sdkSends } = await import('./send-cpu.js');
    const { send, close } = await sdkSends();
    const many = async (calls: number) => {
      let next = 0;
      const lane = async () => {
        while (next++ < calls) await send();
      };
      await Promise.all(Array.from({ length: 16 }, lane));
    };
    await many(500);
    return async () => {
      await many(5000);
      close();
    };
  },
};

const pct = (share: number) => `${(share * 100).toFixed(1)}%`;

/** A profile summary as markdown lines: the top frames and the modules by self time. */
export function asMarkdown(label: string, { frames, modules }: { frames: Hot[]; modules: Hot[] }): string[] {
  return [
    `Profile (${label}), self time:`,
    '',
    markdownTable(
      ['Top frames', 'Self'],
      frames.map((hot) => [`\`${hot.name}\``, pct(hot.share)]),
    ),
    '',
    markdownTable(
      ['By module', 'Self'],
      modules.map((hot) => [`\`${hot.name}\``, pct(hot.share)]),
    ),
  ];
}

function run(args: readonly string[], stdout: 'pipe' | 'ignore'): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', stdout, 'inherit'] });
    let output = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`node ${args.join(' ')} exited ${code}`)),
    );
  });
}

/** Profiles a workload in a fresh node and answers its summary as markdown lines. */
export async function profile(workload: string): Promise<string[]> {
  return (await run(['--import', 'tsx', 'bench/profile.ts', workload], 'pipe')).trimEnd().split('\n');
}

/** Runs `node <args>` whole under `--cpu-prof` (a cold start) and answers the summary as markdown lines. */
export async function profileProcess(args: readonly string[], label: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'ams-prof-'));
  try {
    await run(['--cpu-prof', `--cpu-prof-dir=${dir}`, ...args], 'ignore');
    const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
    if (file === undefined) throw new Error('no .cpuprofile written');
    return asMarkdown(`\`node --cpu-prof\`, ${label}`, summarizeProfile(join(dir, file)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isEntry(import.meta.url)) {
  const name = process.argv[2] ?? '';
  const workload = WORKLOADS[name];
  if (workload === undefined) throw new Error(`name a workload: ${Object.keys(WORKLOADS).join(', ')}`);
  const hot = await workload();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  await hot();
  const { profile: taken } = await session.post('Profiler.stop');
  session.disconnect();
  console.log(
    asMarkdown(
      `\`node:inspector\`, workload \`${name}\`, setup excluded`,
      summarize(taken as unknown as Profile),
    ).join('\n'),
  );
}
