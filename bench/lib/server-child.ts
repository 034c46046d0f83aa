// Servers measured in a process of their own, so their CPU is counted apart from the client's: the
// child prints one JSON line (its ports and whatever the client needs), then answers commands read
// from stdin, one a line: `cpu` answers the CPU the process used so far (user + system, µs), any
// other name runs that command of the child and answers its result; `profile-start` and
// `profile-stop` take a CPU profile (node:inspector) of what the child does in between and answer
// its summary (bench/lib/cpu-profile.ts). Both sides live here.
import { type ChildProcess, spawn } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { createInterface } from 'node:readline';
import { ROOT } from './child.js';
import { type Hot, type Profile, summarize } from './cpu-profile.js';

type Commands = Record<string, () => unknown | Promise<unknown>>;

/** The profiling commands every server child answers. */
function profiling(): Commands {
  const session = new Session();
  return {
    'profile-start': async () => {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 200 });
      await session.post('Profiler.start');
      return true;
    },
    'profile-stop': async () => {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      return summarize(profile as unknown as Profile, Number(process.env.BENCH_PROFILE_TOP ?? 15));
    },
  };
}

/** In the child: prints `info`, then serves the commands until stdin ends. */
export function serveCommands(info: unknown, own: Commands = {}): void {
  const commands = { ...profiling(), ...own };
  process.stdout.write(`${JSON.stringify(info)}\n`);
  const lines = createInterface({ input: process.stdin });
  lines.on('line', async (line) => {
    const name = line.trim();
    const command = commands[name];
    const cpu = () => {
      const used = process.cpuUsage();
      return used.user + used.system;
    };
    const result = name === 'cpu' ? cpu() : command ? await command() : { error: `no command ${name}` };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });
  lines.on('close', () => process.exit(0));
}

/** Runs `load` under a CPU profile of the child and answers the summary (bench/profile.ts's markdown). */
export async function profileChild(
  server: ServerChild<unknown>,
  label: string,
  load: () => Promise<unknown>,
): Promise<string[]> {
  const { asMarkdown } = await import('../profile.js');
  await server.command('profile-start');
  await load();
  return asMarkdown(label, await server.command<{ frames: Hot[]; modules: Hot[] }>('profile-stop'));
}

/** The client's handle on a server child. */
export interface ServerChild<Info> {
  info: Info;
  /** The CPU the child used so far, in µs. */
  cpu(): Promise<number>;
  /** Runs a named command of the child and answers its result. */
  command<T>(name: string): Promise<T>;
  /** Ends the child (it exits when its stdin ends, writing a `--cpu-prof` profile first). */
  close(): Promise<void>;
}

/** Starts `bench/<script>` under tsx (after `nodeFlags`, such as `--cpu-prof`) and waits for its first line. */
export function startServerChild<Info>(
  script: string,
  nodeFlags: readonly string[] = [],
): Promise<ServerChild<Info>> {
  const child: ChildProcess = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', `bench/${script}`], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const next = () => new Promise<string>((resolve) => waiting.push(resolve));
  const ask = async <T>(name: string): Promise<T> => {
    const answer = next();
    child.stdin!.write(`${name}\n`);
    return JSON.parse(await answer) as T;
  };
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    exited.then(() => reject(new Error(`bench/${script} exited before it was ready`)));
    next().then((line) =>
      resolve({
        info: JSON.parse(line) as Info,
        cpu: () => ask<number>('cpu'),
        command: ask,
        close: () => {
          child.stdin!.end();
          return exited;
        },
      }),
    );
  });
}
