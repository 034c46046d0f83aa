// Runs a command while every core is kept busy, to show that the tests hold on a loaded machine
// (`npm run test:busy`). One worker thread per core spins at normal priority, so the command's
// processes compete with them for every core, as they would with other work on a shared machine.
//
//   node scripts/busy.mjs [--times N] [--burners N] [--] [command ...]
//
// With no command it runs `npm test`. --times runs the command N times in a row and stops at the first
// failure; --burners sets how many threads spin (default: one per core). Plain Node, no dependency.
import { spawn } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';

const usage = 'usage: node scripts/busy.mjs [--times N] [--burners N] [--] [command ...]';

function parse(argv) {
  const options = { times: 1, burners: availableParallelism(), command: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      options.command = argv.slice(i + 1);
      break;
    }
    if (arg === '--times' || arg === '--burners') {
      const value = Number(argv[++i]);
      if (!Number.isInteger(value) || value < (arg === '--times' ? 1 : 0)) throw new Error(usage);
      options[arg.slice(2)] = value;
      continue;
    }
    if (arg.startsWith('--')) throw new Error(usage);
    options.command = argv.slice(i);
    break;
  }
  if (options.command.length === 0) options.command = ['npm', 'test'];
  return options;
}

/** Starts one spinning thread: an endless loop that only `terminate()` or process exit stops. */
function burner() {
  const worker = new Worker('for (;;) {}', { eval: true });
  worker.unref();
  return worker;
}

/** Runs the command once with inherited stdio; resolves to its exit code (1 if a signal ended it). */
function runOnce(command, track) {
  return new Promise((resolve) => {
    // A shell, so `npm` and `npx` resolve the same way they do when typed (npm.cmd on Windows too).
    const child = spawn(command.join(' '), { stdio: 'inherit', shell: true });
    track(child);
    child.on('exit', (code, signal) => resolve(signal ? 1 : (code ?? 1)));
    child.on('error', () => resolve(1));
  });
}

let options;
try {
  options = parse(process.argv.slice(2));
} catch (error) {
  console.error(error.message);
  process.exit(2);
}

let current;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    current?.kill(signal);
    process.exit(130);
  });
}

const burners = Array.from({ length: options.burners }, burner);
const label = options.command.join(' ');
const say = (text) => console.error(`[busy] ${text}`);
say(`${burners.length} spinning threads on ${availableParallelism()} cores; running: ${label}`);

let code = 0;
let passed = 0;
for (let run = 1; run <= options.times; run++) {
  const started = Date.now();
  code = await runOnce(options.command, (child) => {
    current = child;
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const load = loadavg()[0].toFixed(1);
  const outcome = code === 0 ? 'passed' : `failed (exit ${code})`;
  say(`run ${run}/${options.times}: ${outcome} in ${seconds} s, load ${load}`);
  if (code !== 0) break;
  passed++;
}

await Promise.all(burners.map((worker) => worker.terminate()));
say(`${passed} of ${options.times} runs passed in a row`);
process.exit(code);
