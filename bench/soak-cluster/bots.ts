// The soak's bot processes: each `node --import tsx bench/soak-cluster-bot.ts`, started with the
// world's credentials, ready once it prints its port. Their `log` lines are gathered in one list, in
// the order they arrive. The soak SIGKILLs them, pauses and resumes them (SIGSTOP, SIGCONT), and
// stops them with SIGTERM, which they answer with `bot.close`.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
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

/** A time a process was stopped (SIGSTOP to SIGCONT; `to` is Infinity while it still is). */
export interface Pause {
  pid: number;
  from: number;
  to: number;
}

/** One line a bot logged (see soak-cluster-bot.ts). */
export interface LogEntry {
  event:
    | 'received'
    | 'responded'
    | 'start'
    | 'stopped'
    | 'end'
    | 'answered'
    | 'timed out'
    | 'given up'
    | 'closing'
    | 'closed';
  pid: number;
  at: number;
  /** Numbers the handler runs of one process. */
  run?: number;
  conversationId?: string;
  text?: string;
  webhookId?: string;
  status?: number;
}

/** Starts, kills, pauses and stops bot processes. */
export function startBots(env: Record<string, string>) {
  const running = new Set<BotProcess>();
  const kills: Kill[] = [];
  const pauses: Pause[] = [];
  const log: LogEntry[] = [];

  const start = () =>
    new Promise<BotProcess>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'bench/soak-cluster-bot.ts'], {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let rest = '';
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) {
          if (line.startsWith('log ')) log.push(JSON.parse(line.slice(4)) as LogEntry);
          const ready = /^ready (\d+)$/.exec(line);
          if (ready && child.pid !== undefined) {
            const bot = { pid: child.pid, port: Number(ready[1]), child };
            running.add(bot);
            resolve(bot);
          }
        }
      });
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`a bot exited with ${code} before it was ready`)));
    });

  const exited = (bot: BotProcess) =>
    bot.child.exitCode !== null || bot.child.signalCode !== null
      ? Promise.resolve()
      : once(bot.child, 'exit');

  return {
    start,
    kills,
    pauses,
    log,
    running: () => [...running],
    pickVictim: (random: () => number) => [...running][Math.floor(random() * running.size)],
    kill(bot: BotProcess) {
      running.delete(bot);
      kills.push({ pid: bot.pid, at: Date.now() });
      bot.child.kill('SIGKILL');
    },
    pause(bot: BotProcess) {
      bot.child.kill('SIGSTOP');
      pauses.push({ pid: bot.pid, from: Date.now(), to: Number.POSITIVE_INFINITY });
    },
    resume(bot: BotProcess) {
      bot.child.kill('SIGCONT');
      const pause = pauses.findLast((p) => p.pid === bot.pid);
      if (pause) pause.to = Date.now();
    },
    /** SIGTERM, answered by `bot.close`; resolves with the exit code once the process is gone. */
    async terminate(bot: BotProcess) {
      running.delete(bot);
      const gone = exited(bot);
      bot.child.kill('SIGTERM');
      await gone;
      return bot.child.exitCode;
    },
    async stopAll() {
      const exits = [...running].map(exited);
      for (const bot of running) bot.child.kill('SIGKILL');
      running.clear();
      await Promise.all(exits);
    },
  };
}
