// Bun and Deno smoke test (`npm run smoke:runtimes`, after `npm run build`): installs the packed
// tarball and the `bun` and `deno` npm packages into a fresh temp folder, serves the mock service from
// that tarball with Node on loopback, and runs scenario.mjs under each runtime: the client, verifyWebhook
// and bot.fetch served by the runtime's own server. Node 24 runs the same scenario first as the control,
// so a failure under Bun or Deno is theirs, not the scenario's. Exits non-zero on any failure.
//
// Usage: node scripts/runtimes/run.mjs [node] [bun] [deno]   (default: all three)
import { copyFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkWire } from './wire-checks.mjs';
import { binOf, CheckFailed, createWorkspace, fail, runAsync, step } from './workspace.mjs';

const TAG = 'smoke:runtimes';
const RUNTIMES = {
  node: () => [process.execPath, ['scenario.mjs']],
  bun: (app) => [binOf(app, 'bun'), ['scenario.mjs']],
  // --node-modules-dir=manual: resolve `agent-messaging` from the folder's node_modules, as npm laid it
  // out. The only permission is the network to loopback: the SDK needs no env, read or other access.
  deno: (app) => [
    binOf(app, 'deno'),
    ['run', '--node-modules-dir=manual', '--allow-net=127.0.0.1', '--no-prompt', 'scenario.mjs'],
  ],
};
const chosen = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(RUNTIMES);
for (const name of chosen) {
  if (!RUNTIMES[name])
    throw new Error(`unknown runtime ${name}: pick from ${Object.keys(RUNTIMES).join(', ')}`);
}

let workspace;
let server;
try {
  workspace = createWorkspace(TAG, {
    packages: [chosen.includes('bun') && 'bun@1', chosen.includes('deno') && 'deno@2'].filter(Boolean),
    allowScripts: ['bun', 'deno'],
  });
  const { app, work } = workspace;
  // The runtimes write caches into the temp folder only, send no telemetry and look for no updates.
  const env = {
    ...process.env,
    DENO_DIR: join(work, 'deno-dir'),
    DENO_NO_UPDATE_CHECK: '1',
    DO_NOT_TRACK: '1',
    NO_COLOR: '1',
  };

  // Through the package's exports map, as a consumer's import would resolve it.
  const resolveFromApp = createRequire(join(app, 'package.json')).resolve;
  const testing = await import(pathToFileURL(resolveFromApp('agent-messaging/testing')).href);
  const sdk = await import(pathToFileURL(resolveFromApp('agent-messaging')).href);
  const mock = testing.createMockService();
  server = await mock.listen({ port: 0 });
  step(TAG, `mock service from the tarball on ${server.baseUrl}`);

  const fixture = await signedFixture(testing, sdk);
  writeFileSync(join(app, 'smoke-config.json'), JSON.stringify({ baseUrl: server.baseUrl, fixture }));
  copyFileSync(join(import.meta.dirname, 'scenario.mjs'), join(app, 'scenario.mjs'));

  for (const name of chosen) {
    mock.reset();
    const [cmd, args] = RUNTIMES[name](app);
    step(TAG, `${name}: ${[cmd.replace(app, '.'), ...args].join(' ')}`);
    const code = await runAsync(cmd, args, { cwd: app, env, timeoutMs: 60_000 });
    if (code !== 0) throw new CheckFailed(`the scenario failed under ${name} (exit ${code})`);
    await mock.idle();
    const wire = checkWire(mock, name);
    step(
      TAG,
      `${name}: passed; reply sent as ${wire.transport}; ${wire.requests} requests; UA ${wire.userAgent}`,
    );
  }
  step(TAG, `passed on ${chosen.join(', ')}`);
} catch (error) {
  fail(TAG, error);
} finally {
  await server?.close();
  workspace?.cleanup();
}

/**
 * A `message.received` delivery signed in Node with signWebhook, for the runtimes to verify. Node
 * verifies it first, so a runtime that refuses it has a problem of its own.
 */
async function signedFixture(testing, sdk) {
  const secret = testing.generateWebhookSecret();
  const eventId = 'evt_smoke_fixture_1';
  const createdAt = new Date().toISOString();
  const body = JSON.stringify({
    schema: 'svc.event.v1',
    eventId,
    type: 'message.received',
    createdAt,
    agentId: 'agt_smoke',
    conversationId: 'cnv_smoke',
    message: {
      id: 'msg_smoke',
      conversation_id: 'cnv_smoke',
      sequence: 1,
      sender: { id: 'usr_smoke' },
      parts: [{ part_index: 0, type: 'text', text: 'ping' }],
      fallback_text: 'ping',
      status: 'sent',
      created_at: createdAt,
    },
  });
  const headers = await testing.signWebhook({ id: eventId, payload: body, secret });
  await sdk.verifyWebhook(body, headers, { secret });
  return { secret, body, headers, eventId };
}
