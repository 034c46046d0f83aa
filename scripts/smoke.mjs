// Packed-tarball smoke test: installs what `npm pack` would publish into a fresh folder and uses
// it the way a consumer does: import(), require(), the bin, and a type-check of a consumer file
// under moduleResolution nodenext and bundler. Run after `npm run build`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'agent-messaging-smoke-'));
const run = (cmd, args, cwd = work) =>
  execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] }).toString();
const step = (name) => console.log(`smoke: ${name}`);

try {
  step('npm pack');
  const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], root));
  const tarball = join(work, packed.filename);

  const app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'smoke-app', private: true }));
  step('npm install the tarball into a fresh folder');
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      tarball,
      `typescript@${tsVersion()}`,
      '@types/node@24',
    ],
    app,
  );

  const scenario = (load) => `
${load}
const mock = createMockService();
const { baseUrl, close } = await mock.listen({ port: 0 });
try {
  const { agent, api_key } = await registerAgent(
    { handle: 'smoke', display_name: 'Smoke', webhook_url: 'http://127.0.0.1:9/hook', capabilities: ['text'] },
    { baseUrl },
  );
  if (!agent.id.startsWith('agt_')) throw new Error('registration answered ' + JSON.stringify(agent));
  const client = new AgentClient({ apiKey: api_key, baseUrl });
  if (typeof client.messages.send !== 'function') throw new Error('client has no messages.send');
  if (typeof verifyWebhook !== 'function' || typeof toNodeHandler !== 'function') throw new Error('missing export');
  console.log('ok', agent.handle);
} finally {
  await close();
}
`;
  writeFileSync(
    join(app, 'esm.mjs'),
    scenario(`import { AgentClient, registerAgent, verifyWebhook } from 'agent-messaging';
import { createMockService } from 'agent-messaging/testing';
import { toNodeHandler } from 'agent-messaging/node';`),
  );
  writeFileSync(
    join(app, 'cjs.cjs'),
    `(async () => {${scenario(`const { AgentClient, registerAgent, verifyWebhook } = require('agent-messaging');
const { createMockService } = require('agent-messaging/testing');
const { toNodeHandler } = require('agent-messaging/node');`)}})().catch((error) => { console.error(error); process.exit(1); });`,
  );
  step(`import() on Node ${process.version}`);
  process.stdout.write(run(process.execPath, ['esm.mjs'], app));
  step(`require() on Node ${process.version}`);
  process.stdout.write(run(process.execPath, ['cjs.cjs'], app));

  step('the bin');
  const help = run(process.execPath, [join(app, 'node_modules/agent-messaging/dist/cli.js'), '--help'], app);
  if (!help.includes('mock')) throw new Error(`agent-messaging --help does not mention mock:\n${help}`);

  writeFileSync(
    join(app, 'consumer.ts'),
    `import { AgentClient, type WebhookEvent } from 'agent-messaging';
import { createMockService } from 'agent-messaging/testing';
import { toNodeHandler } from 'agent-messaging/node';
const client: AgentClient = new AgentClient({ apiKey: 'ams_sk_x', baseUrl: 'http://127.0.0.1:1' });
export const send = (id: string) => client.messages.send(id, { text: 'hi' });
export const mock = createMockService();
export const handler = toNodeHandler;
export function kind(event: WebhookEvent): string { return event.type; }
`,
  );
  for (const resolution of ['nodenext', 'bundler']) {
    step(`type-check a consumer with moduleResolution ${resolution}`);
    const module = resolution === 'nodenext' ? 'nodenext' : 'esnext';
    run(
      process.execPath,
      [
        join(app, 'node_modules/typescript/bin/tsc'),
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--target',
        'es2023',
        '--lib',
        'es2023,dom',
        '--module',
        module,
        '--moduleResolution',
        resolution,
        'consumer.ts',
      ],
      app,
    );
  }
  step('passed');
} finally {
  rmSync(work, { recursive: true, force: true });
}

function tsVersion() {
  return JSON.parse(
    execFileSync('npm', ['pkg', 'get', 'devDependencies.typescript'], { cwd: root }).toString(),
  );
}
