// Packed-tarball smoke test (`npm run smoke`, after `npm run build`): installs what `npm pack` would
// publish into a fresh folder and uses it the way a consumer does, on Node 24 (the project's) and on
// the latest Node 22 (the oldest the package supports, from the `node@22` npm package): import(),
// require() (Node's require(esm): the package is ESM-only) and the bin on each; then a type-check of
// consumer files under moduleResolution nodenext (an ESM and a CommonJS file) and bundler, with the
// package's own .d.ts files checked too (no skipLibCheck).
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { binOf, CheckFailed, createWorkspace, devVersion, fail, run, step } from './runtimes/workspace.mjs';

const TAG = 'smoke';
const OLDEST = [22, 12];

let workspace;
try {
  // msw is the optional peer of agent-messaging/testing: a consumer of that entry has it installed.
  workspace = createWorkspace(TAG, {
    packages: [
      `typescript@${devVersion('typescript')}`,
      '@types/node@24',
      `msw@${devVersion('msw')}`,
      'node@22',
    ],
    allowScripts: ['node'],
  });
  const { app } = workspace;
  writeScenarios(app);
  for (const node of [process.execPath, binOf(app, 'node')]) {
    const version = run(node, ['--version'], app).trim();
    const [major, minor] = version.slice(1).split('.').map(Number);
    if (major < OLDEST[0] || (major === OLDEST[0] && minor < OLDEST[1])) {
      throw new CheckFailed(`${node} is ${version}, older than the ${OLDEST.join('.')} the package supports`);
    }
    step(TAG, `import() on Node ${version}`);
    process.stdout.write(run(node, ['esm.mjs'], app));
    step(TAG, `require() on Node ${version}`);
    process.stdout.write(run(node, ['cjs.cjs'], app));
    step(TAG, `the bin on Node ${version}`);
    // Through the installed bin link, so its shebang (`env node`) picks this Node from PATH.
    const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}` };
    const help = run(binOf(app, 'agent-messaging'), ['--help'], app, env);
    if (!help.includes('mock'))
      throw new CheckFailed(`agent-messaging --help does not mention mock:\n${help}`);
    step(TAG, `agent-messaging demo on Node ${version}`);
    const demo = run(binOf(app, 'agent-messaging'), ['demo', '--text', 'smoke test'], app, {
      ...env,
      NO_COLOR: '1',
    });
    if (!demo.includes('holds exactly the text the bot wrote'))
      throw new CheckFailed(`agent-messaging demo did not end with the exact reply:\n${demo}`);
  }
  typeCheckConsumers(app);
  typeCheckWithoutPeers();
  step(TAG, 'passed');
} catch (error) {
  fail(TAG, error);
} finally {
  workspace?.cleanup();
}

/** The import() and require() scenarios: the same steps, loaded each way. */
function writeScenarios(app) {
  const scenario = (load) => `${load}
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
  if (typeof toNodeHandler !== 'function') throw new Error('agent-messaging/node has no toNodeHandler');
  const secret = generateWebhookSecret();
  const body = JSON.stringify({ schema: 'svc.event.v1', eventId: 'evt_1', type: 'webhook.test', createdAt: new Date().toISOString(), agentId: agent.id });
  const event = await verifyWebhook(body, await signWebhook({ id: 'evt_1', payload: body, secret }), { secret });
  if (event.type !== 'webhook.test') throw new Error('verifyWebhook answered ' + JSON.stringify(event));
  const posts = mock.requests.filter((r) => r.method === 'POST' && r.path === '/v1/agents');
  if (posts.length !== 1) throw new Error('the mock logged ' + posts.length + ' registrations');
  // The emulator page was bundled at build: the package serves it with no esbuild installed.
  const page = await fetch(baseUrl + '/_mock/ui/app.js');
  if (page.status !== 200 || !(await page.text()).includes('/_mock/events')) throw new Error('no emulator page: HTTP ' + page.status);
  console.log('ok', agent.handle, 'registered on', process.version);
} finally {
  await close();
}
`;
  writeFileSync(
    join(app, 'esm.mjs'),
    scenario(`import { AgentClient, registerAgent, verifyWebhook } from 'agent-messaging';
import { createMockService, generateWebhookSecret, signWebhook } from 'agent-messaging/testing';
import { toNodeHandler } from 'agent-messaging/node';`),
  );
  writeFileSync(
    join(app, 'cjs.cjs'),
    `(async () => {${scenario(`const { AgentClient, registerAgent, verifyWebhook } = require('agent-messaging');
const { createMockService, generateWebhookSecret, signWebhook } = require('agent-messaging/testing');
const { toNodeHandler } = require('agent-messaging/node');`)}})().catch((error) => { console.error(error); process.exit(1); });`,
  );
}

/**
 * Consumer files type-checked as users compile them: an ESM and a CommonJS file under nodenext
 * (TypeScript resolves `require()` of ESM there, as Node does), and a bundler-resolved file without
 * Node's types, as a Bun, Deno, Workers or browser-bundler project has it. The nodenext program also
 * checks the package's own .d.ts files (no skipLibCheck), which catches a declaration that imports
 * something a consumer does not have; that costs ~20 s (zod's types), so the bundler program, whose
 * .d.ts files are the same ones, skips it.
 */
function typeCheckConsumers(app) {
  const body = `const client: AgentClient = new AgentClient({ apiKey: 'ams_sk_x', baseUrl: 'http://127.0.0.1:1' });
export const send = (id: string) => client.messages.send(id, { text: 'hi' });
export const mock = createMockService();
export const bot = createBot({ apiKey: 'ams_sk_x', webhookSecret: 'whsec_AAAA', baseUrl: 'http://127.0.0.1:1' });
export function kind(event: WebhookEvent): string { return event.type; }
`;
  const esm = `import { AgentClient, createBot, type WebhookEvent } from 'agent-messaging';
import { createMockService } from 'agent-messaging/testing';
`;
  writeFileSync(
    join(app, 'consumer.mts'),
    `${esm}import { toNodeHandler } from 'agent-messaging/node';
import { mswHandlers } from 'agent-messaging/testing/msw';
import { setupServer } from 'msw/node';
${body}export const handler = toNodeHandler(bot);
export const server = setupServer(...mswHandlers(mock));
`,
  );
  writeFileSync(
    join(app, 'consumer.cts'),
    `import sdk = require('agent-messaging');
import testing = require('agent-messaging/testing');
import node = require('agent-messaging/node');
const { AgentClient, createBot } = sdk;
type AgentClient = sdk.AgentClient;
type WebhookEvent = sdk.WebhookEvent;
const { createMockService } = testing;
${body}export const handler = node.toNodeHandler(bot);
`,
  );
  writeFileSync(join(app, 'consumer.ts'), `${esm}${body}`);

  const base = { strict: true, noEmit: true, target: 'es2023', lib: ['es2023', 'dom'] };
  const programs = [
    {
      name: 'nodenext',
      files: ['consumer.mts', 'consumer.cts'],
      options: { module: 'nodenext', moduleResolution: 'nodenext', types: ['node'] },
    },
    {
      name: 'bundler',
      files: ['consumer.ts'],
      options: { module: 'esnext', moduleResolution: 'bundler', types: [], skipLibCheck: true },
    },
  ];
  for (const { name, files, options } of programs) {
    const tsconfig = `tsconfig.${name}.json`;
    const compilerOptions = { ...base, ...options };
    writeFileSync(join(app, tsconfig), JSON.stringify({ compilerOptions, files }));
    step(TAG, `type-check ${files.join(' and ')} with moduleResolution ${name}`);
    run(process.execPath, [join(app, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], app);
  }
}

/**
 * A project that installs the tarball and TypeScript only: no msw (an optional peer), no @types/node.
 * A consumer of the main entry and `agent-messaging/testing` type-checks strictly with the package's
 * own .d.ts files checked (no skipLibCheck), so neither entry's types reach for msw or Node.
 */
function typeCheckWithoutPeers() {
  const tag = `${TAG}-bare`;
  const bare = createWorkspace(tag, { packages: [`typescript@${devVersion('typescript')}`] });
  try {
    if (existsSync(join(bare.app, 'node_modules/msw'))) throw new CheckFailed('msw was installed as a peer');
    writeFileSync(
      join(bare.app, 'consumer.mts'),
      `import { AgentClient, type Message } from 'agent-messaging';
import { createMockService, type Seed } from 'agent-messaging/testing';
const mock = createMockService();
export const seeded: Promise<Seed> = mock.seed({ handle: 'bare' });
export const client = new AgentClient({ apiKey: 'ams_sk_x', baseUrl: mock.baseUrl, fetch: mock.fetch });
export const text = (message: Message): string => message.fallback_text ?? '';
export const readHandlers = (): readonly unknown[] => mock.handlers;
`,
    );
    // Without msw, API.md's mock.handlers fails on read, naming the missing peer and the way out.
    writeFileSync(
      join(bare.app, 'no-msw.mjs'),
      `import { createMockService } from 'agent-messaging/testing';
try {
  createMockService().handlers;
  throw new Error('mock.handlers answered without msw installed');
} catch (error) {
  if (!/npm install --save-dev msw@3/.test(error.message)) throw error;
}
`,
    );
    step(tag, 'mock.handlers without msw names the missing peer');
    run(process.execPath, ['no-msw.mjs'], bare.app);
    const compilerOptions = {
      strict: true,
      noEmit: true,
      target: 'es2023',
      lib: ['es2023', 'dom'],
      module: 'nodenext',
      moduleResolution: 'nodenext',
      types: [],
    };
    writeFileSync(
      join(bare.app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions, files: ['consumer.mts'] }),
    );
    step(tag, 'type-check consumer.mts without msw or @types/node, without skipLibCheck');
    run(
      process.execPath,
      [join(bare.app, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'],
      bare.app,
    );
  } finally {
    bare.cleanup();
  }
}
