import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { mockSchemas } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';

// The wire schemas as values, from the public namespace.
const { CreateUserResponse } = mockSchemas;

const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

function run(args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, exited, output: () => ({ stdout, stderr }) };
}

describe('the agent-messaging command', () => {
  it('serves the mock on 127.0.0.1, prints the base URL, and stops on SIGTERM', async () => {
    const { child, exited, output } = run(['mock', '--port', '0']);
    const baseUrl = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', () => {
        const line = output().stdout.split('\n')[0] ?? '';
        if (output().stdout.includes('\n')) resolve(line);
      });
      child.on('exit', () => reject(new Error(`exited early: ${output().stderr}`)));
    });
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const created = await fetch(`${baseUrl}/_mock/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'Cli' }),
    });
    expect(CreateUserResponse.parse(await created.json()).user.display_name).toBe('Cli');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('lists its commands with --help, refuses an unknown command, and names the option of a bad port', async () => {
    // Run side by side: each start of the command costs a process.
    const [helped, unknown, badPort] = [run(['--help']), run(['frobnicate']), run(['mock', '--port', 'x'])];
    expect(await helped.exited).toBe(0);
    expect(helped.output().stdout).toContain('mock');
    expect(await unknown.exited).toBe(2);
    expect(unknown.output().stderr).toContain('Unknown command "frobnicate"');
    expect(await badPort.exited).toBe(2);
    expect(badPort.output().stderr).toContain('--port');
  });
});
