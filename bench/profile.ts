// Workloads to profile with `node --cpu-prof` when a goal is missed: only the SDK's side of a
// measurement, long enough for the sampler. `node --cpu-prof --import tsx bench/profile.ts <name>`.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEntry, ROOT } from './lib/child.js';
import { summarizeProfile } from './lib/cpu-profile.js';
import { markdownTable } from './lib/report.js';

/** The workloads that can be profiled, by name. */
export const WORKLOADS = {
  'stream-read': async () => {
    const { readWithSdk } = await import('./stream-read.js');
    const { recordStream } = await import('./lib/recorded-stream.js');
    const recording = recordStream({ bytes: 20 * 1024 * 1024, patch: 'token' });
    for (let i = 0; i < 8; i++) await readWithSdk(recording);
  },
  send: async () => {
    const { profileSends } = await import('./send-cpu.js');
    await profileSends(6000);
  },
} satisfies Record<string, () => Promise<void>>;

/** A workload's name. */
export type Workload = keyof typeof WORKLOADS;

/** Runs a workload under `--cpu-prof` in a fresh node and answers its summary as markdown lines. */
export function profile(workload: Workload): Promise<string[]> {
  return profileProcess(['--import', 'tsx', 'bench/profile.ts', workload], `workload \`${workload}\``);
}

/** Runs `node <args>` under `--cpu-prof` and answers the summary of its profile as markdown lines. */
export async function profileProcess(args: readonly string[], label: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'ams-prof-'));
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...args], {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve() : reject(new Error(`profile of ${label} exited ${code}`)),
      );
    });
    const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
    if (file === undefined) throw new Error('no .cpuprofile written');
    const { frames, modules } = summarizeProfile(join(dir, file));
    const pct = (share: number) => `${(share * 100).toFixed(1)}%`;
    return [
      `Profile (\`node --cpu-prof\`, ${label}), self time:`,
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
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const name = process.argv[2];
if (isEntry(import.meta.url)) {
  if (name === undefined || !(name in WORKLOADS))
    throw new Error(`name a workload: ${Object.keys(WORKLOADS).join(', ')}`);
  await WORKLOADS[name as Workload]();
}
