// The soak's bot processes: each `node --import tsx bench/soak-cluster-bot.ts`, started with the
// world's credentials, ready once it prints its port; killed with SIGKILL by the chaos loop.
import { type ChildProcess, spawn } from 'node:child_process';
import { ROOT } from '../lib/child.js';

/** A running bot process. */
export interface BotProcess {
  pid: number;
  port: number;
  child: ChildProcess;
}

/** A kill, for the overlap check: a killed handler counts as running until then. */
export interface Kill {
  pid: number;
  at: number;
}

/** Starts, kills and stops bot processes. */
export function startBots(env: Record<string, string>) {
  const running = new Set<BotProcess>();
  const kills: Kill[] = [];

  const start = () =>
    new Promise<BotProcess>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'bench/soak-cluster-bot.ts'], {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let output = '';
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (chunk: string) => {
        output += chunk;
        const match = /ready (\d+)/.exec(output);
        if (match && child.pid !== undefined) {
          const bot = { pid: child.pid, port: Number(match[1]), child };
          running.add(bot);
          resolve(bot);
        }
      });
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`a bot exited with ${code} before it was ready`)));
    });

  return {
    start,
    kills,
    pickVictim: (random: () => number) => [...running][Math.floor(random() * running.size)],
    kill(bot: BotProcess) {
      running.delete(bot);
      kills.push({ pid: bot.pid, at: Date.now() });
      bot.child.kill('SIGKILL');
    },
    async stopAll() {
      const exits = [...running].map(
        (bot) =>
          new Promise((resolve) =>
            bot.child.exitCode !== null ? resolve(null) : bot.child.once('exit', resolve),
          ),
      );
      for (const bot of running) bot.child.kill('SIGTERM');
      running.clear();
      await Promise.all(exits);
    },
  };
}
