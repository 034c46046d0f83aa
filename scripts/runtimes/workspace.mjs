// A throwaway consumer folder shared by the smoke tests: pack what `npm pack` would publish, install
// it (and any runtime packages) into a fresh temp folder, and run commands there. Nothing here is
// installed into the repo: runtimes such as bun and deno come from npm at run time, because the
// registry lacks some of their platform packages and a lockfile entry for them breaks `npm ci`.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The repository root. */
export const root = resolve(import.meta.dirname, '../..');

const started = Date.now();

/** Prints one progress line, with the seconds since the script started. */
export function step(tag, text) {
  console.log(`${tag}: ${text} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

/** Runs a command to completion and answers its stdout; stderr goes to ours, a failure throws. */
export function run(cmd, args, cwd, env = process.env) {
  try {
    return execFileSync(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] }).toString();
  } catch (error) {
    // tsc and others report on stdout: show it, or the failure says only "Command failed".
    if (error.stdout?.length) process.stderr.write(error.stdout);
    if (error.status === undefined) throw error; // it did not start at all: keep the system's error
    const how = error.status === null ? `was killed (${error.signal})` : `exited ${error.status}`;
    throw new CheckFailed(`${[cmd, ...args].join(' ')} ${how}`);
  }
}

/** A check that failed for a reason already printed: reported in one line, without a stack. */
export class CheckFailed extends Error {
  name = 'CheckFailed';
}

/** Ends a smoke script that failed: what failed (a stack only for the unexpected), and exit code 1. */
export function fail(tag, error) {
  console.error(`${tag}: FAILED: ${error instanceof CheckFailed ? error.message : (error?.stack ?? error)}`);
  process.exitCode = 1;
}

/**
 * Runs a command without blocking this process's event loop (a mock served from here must keep
 * answering while the child talks to it). Output is inherited. Resolves with the exit code; a child
 * still running after `timeoutMs` is killed and reported as a failure rather than left to hang CI.
 */
export function runAsync(cmd, args, { cwd, env = process.env, timeoutMs }) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'inherit', 'inherit'] });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} did not finish within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolvePromise(code ?? (signal ? `signal ${signal}` : 1));
    });
  });
}

/** The version range of one of the repo's devDependencies. */
export function devVersion(name) {
  const range = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies?.[name];
  if (!range) throw new Error(`package.json has no devDependency ${name}`);
  return range;
}

/**
 * A fresh temp folder holding the packed tarball and an `app` folder with it installed, plus
 * `packages`. `allowScripts` names the packages whose install scripts may run (npm's allowScripts
 * policy): node, bun and deno each fetch their platform binary package from one.
 */
export function createWorkspace(tag, { packages = [], allowScripts = [] } = {}) {
  const work = mkdtempSync(join(tmpdir(), `agent-messaging-${tag.replace(/[^a-z0-9]+/gi, '-')}-`));
  try {
    step(tag, 'npm pack');
    // The prepack script's build prints to the same stdout: the JSON is the array at its end.
    const output = run('npm', ['pack', '--json', '--pack-destination', work], root);
    const [packed] = JSON.parse(output.slice(output.lastIndexOf('\n[') + 1));
    const tarball = join(work, packed.filename);
    const app = join(work, 'app');
    mkdirSync(app);
    const allowed = Object.fromEntries(allowScripts.map((name) => [name, true]));
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: `${tag}-app`, private: true, allowScripts: allowed }),
    );
    step(tag, `npm install the tarball${packages.length ? ` and ${packages.join(', ')}` : ''}`);
    run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball, ...packages],
      app,
    );
    return { work, app, tarball, cleanup: () => rmSync(work, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
}

/** The path of a binary that a package installed into `app`. */
export const binOf = (app, name) => join(app, 'node_modules', '.bin', name);
