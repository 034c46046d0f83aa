// Each example run the way its header says (`npx tsx examples/<name>.ts`), against a mock on a
// loopback port, with no credentials: what a newcomer sees after `npm run mock`.

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { deliveries, startMock } from './setup.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Starts `examples/<name>.ts` with tsx, as a user would; stopped when the test ends. */
function start(name: string, baseUrl: string, args: string[] = []) {
  const env: NodeJS.ProcessEnv = { ...process.env, AMS_BASE_URL: baseUrl, PORT: '0' };
  for (const key of [
    'AMS_API_KEY',
    'AMS_WEBHOOK_SECRET',
    'AMS_CONVERSATION_ID',
    'AMS_USER_IDS',
    'OPENAI_API_KEY',
    'ANTHROPIC_API_KEY',
  ]) {
    delete env[key];
  }
  const child = spawn(process.execPath, ['--import', 'tsx', `examples/${name}.ts`, ...args], {
    cwd: root,
    env,
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  onTestFinished(() => stop(child));
  return {
    output: () => output,
    /** Resolves with the output once it matches `pattern`; fails if the process exits first. */
    waitFor: (pattern: RegExp) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (!pattern.test(output)) return;
          child.stdout.off('data', check);
          resolve(output);
        };
        child.stdout.on('data', check);
        void exited.then((code) => reject(new Error(`exited with ${code} before ${pattern}:\n${output}`)));
        check();
      }),
    /** Resolves with the exit code. */
    exited,
  };
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill();
  await exited;
}

describe('running each example directly against the mock', () => {
  it.each([
    ['echo-bot', 'Bot: You said: Hello, bot!'],
    ['express-bot', 'Bot: You said: Hello, Express!'],
    ['hono-bot', 'Bot: You said: Hello, Hono!'],
    ['workers-bot', 'Bot: You said: Hello, Worker!'],
    ['streaming-bot', 'Bot: You asked: "Tell me a story.". A model would think here'],
    ['openai-bot', 'Bot: I checked: sunny and 21 °C in Oslo.'],
    ['ai-sdk-bot', 'Bot: I checked: sunny and 21 °C in Lisbon.'],
    ['anthropic-bot', 'Bot: I checked: sunny and 21 °C in Kyoto.'],
    ['chat-sdk-bot', 'Bot: You said "@helper hi". I can see 0 earlier messages of our chat.'],
    ['refund-dialog', 'Bot: Refund $42 for order o_42 to your card?'],
  ])(
    '%s registers a throwaway agent, verifies its webhook and answers the first message',
    async (name, answer) => {
      const { mock, baseUrl } = await startMock();

      const output = await start(name, baseUrl).waitFor(/Say more/);

      expect(output).toContain(answer);
      await mock.idle(); // the bot printed from its handler: the delivery's answer may still be on its way
      const [test, received, ...others] = mock.deliveries;
      expect([test?.type, received?.type, others]).toEqual(['webhook.test', 'message.received', []]);
      expect(received?.status).toBeGreaterThanOrEqual(200);
      expect(received?.status).toBeLessThan(300);
    },
  );

  it('traced-bot prints the trace of a delivery as a tree, from the delivery to its reply and calls', async () => {
    const { baseUrl } = await startMock();

    const output = await start('traced-bot', baseUrl).waitFor(/Say more/);

    expect(output).toContain('Bot: You asked about "opentelemetry". Every step of this answer is a span.');
    const trees = output.split('Trace of one delivery:\n').slice(1);
    const answered = trees.find((tree) => tree.includes('route=message.received')) ?? '';
    expect(answered).toMatch(/^agent-messaging\.delivery [\d.]+ ms outcome=ran\n {2}agent-messaging\.verify/);
    expect(answered).toMatch(/\n {4}look up the topic /);
    expect(answered).toMatch(
      /\n {4}agent-messaging\.reply [\d.]+ ms reply\.transport=stream reply\.outcome=complete/,
    );
    expect(answered).toMatch(/\n {6}POST \/v1\/conversations\/\{conversation_id\}\/messages /);
  });

  it('group-invites proposes a group, both users accept, and the bot hears invite.completed', async () => {
    const { mock, baseUrl } = await startMock();
    const run = start('group-invites', baseUrl);

    expect(await run.exited).toBe(0);
    expect(run.output()).toMatch(/Grace accepted: group cnv_\w+ created/);
    expect(run.output()).toContain('invite.completed reached the bot: "Trip planning", 3 participants');
    expect(deliveries(mock)).toContainEqual(['invite.completed', 200]);
  });

  it('upload-file uploads itself with progress, and the download link serves the same bytes', async () => {
    const { baseUrl } = await startMock();
    const run = start('upload-file', baseUrl);

    expect(await run.exited).toBe(0);
    expect(run.output()).toMatch(/Uploading upload-file\.ts: 100% \((\d+) of \1 bytes\)/);
    const link = /Download it .*: (\S+)/.exec(run.output())?.[1] ?? '';
    const downloaded = await (await fetch(link)).text();
    expect(downloaded).toBe(await readFile(join(root, 'examples/upload-file.ts'), 'utf8'));
  });

  it('export-history writes every message of the conversation to the file it is given', async () => {
    const { baseUrl } = await startMock();
    const dir = await mkdtemp(join(tmpdir(), 'ams-export-run-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'out.jsonl');
    const run = start('export-history', baseUrl, [path]);

    expect(await run.exited).toBe(0);
    expect(run.output()).toContain(`Exported 150 messages of cnv_`);
    const lines = (await readFile(path, 'utf8')).trim().split('\n');
    expect(lines.map((line) => JSON.parse(line).sequence)).toEqual(
      Array.from({ length: 150 }, (_, i) => 150 - i),
    );
  });
});
