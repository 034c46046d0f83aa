// Each measurement runs in a process of its own (a clean heap, its own JIT, no state left by the
// others); the runner reads its outcome from one marked line of its output.
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Outcome } from './report.js';

const MARK = '@@outcome ';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** True when the module at `url` is the script node was started with. */
export const isEntry = (url: string): boolean =>
  process.argv[1] !== undefined && url === pathToFileURL(process.argv[1]).href;

/** Runs `measure` when the module is the entry script, printing its outcome for the runner. */
export function runAsChild(url: string, measure: () => Promise<Outcome>): void {
  if (!isEntry(url)) return;
  measure().then(
    (outcome) => {
      process.stdout.write(`${MARK}${JSON.stringify(outcome)}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}

/** Runs `bench/<script>` under tsx in a fresh node (its progress goes to stderr) and answers its outcome. */
export function runChild(
  script: string,
  options: { nodeFlags?: readonly string[]; args?: readonly string[] } = {},
): Promise<Outcome> {
  const { nodeFlags = [], args = [] } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', `bench/${script}`, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = output.split('\n').find((candidate) => candidate.startsWith(MARK));
      // A child may exit 1 after its outcome (the size budget does); only a missing outcome is a failure.
      if (line === undefined) reject(new Error(`bench/${script} exited with ${code} and no outcome`));
      else resolve(JSON.parse(line.slice(MARK.length)) as Outcome);
    });
  });
}

/** Prints a progress line on stderr, so it never mixes with a child's outcome. */
export const progress = (message: string): void => {
  process.stderr.write(`${message}\n`);
};
