// The files of src/ one webhook delivery runs through before its handler (issue 22: at most 10), on
// the default bot (the memory store, 'queue', a handler that answers with ctx.reply('text')), through
// `bot.fetch` or, with `--node`, through `toNodeHandler`. Read with V8's precise coverage: every
// function that ran from the third delivery's arrival to its handler's first line, by file; module
// setup and the first two deliveries (lazy loads, first-use caches) are not counted.
//
//   node --import tsx scripts/delivery-files.ts [--node]
import { createServer, request as httpRequest } from 'node:http';
import { Session } from 'node:inspector';
import type { AddressInfo } from 'node:net';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../src/', import.meta.url));
const session = new Session();
session.connect();

/** Posts an inspector command and answers its result; the in-process session answers synchronously. */
function post<T>(method: string, params?: object): T {
  let answer: { result?: T; error?: Error } = {};
  session.post(method, params, (error, result) => {
    answer = { error: error ?? undefined, result: result as T };
  });
  if (answer.error) throw answer.error;
  if (answer.result === undefined) throw new Error(`${method} did not answer synchronously`);
  return answer.result;
}

interface Coverage {
  result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[];
}

post('Profiler.enable');
post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

// Loaded after coverage started, so every function of the SDK is counted from its first call.
const { createBot } = await import('../src/index.js');
const { toNodeHandler } = await import('../src/node.js');
const { createMockService, generateWebhookSecret, signWebhook } = await import('../src/testing/index.js');

/**
 * The src/ files that ran since the last reading, with the functions that ran in each (`(anonymous)`
 * for a callback; under tsx, `__name` is its keep-names helper, called where that file makes a closure).
 */
function ranSinceLastReading(): Map<string, string[]> {
  const files = new Map<string, string[]>();
  for (const script of post<Coverage>('Profiler.takePreciseCoverage').result) {
    if (!script.url.startsWith('file://')) continue;
    const path = fileURLToPath(script.url);
    if (!path.startsWith(root)) continue;
    const ran = script.functions.filter((fn) => fn.ranges[0]!.count > 0);
    if (ran.length === 0) continue;
    const names = new Set(ran.map((fn) => fn.functionName || '(anonymous)'));
    files.set(relative(root, path), [...names]);
  }
  return files;
}

const mock = createMockService();
const secret = generateWebhookSecret();
const bot = createBot({
  apiKey: 'ams_sk_files',
  webhookSecret: secret,
  baseUrl: mock.baseUrl,
  fetch: mock.fetch,
});
let reading: Map<string, string[]> | undefined;
let deliveries = 0;
bot.on('message.received', async (ctx) => {
  deliveries += 1;
  if (deliveries === 3) reading = ranSinceLastReading();
  await ctx.reply('text').catch(() => undefined);
});

const viaNode = process.argv.includes('--node');
const server = viaNode ? createServer(toNodeHandler(bot)) : undefined;
if (server) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

/** Sends one signed message.received delivery to the bot through the chosen door. */
async function deliver(n: number): Promise<number> {
  const id = `evt_files_${n}`;
  const at = new Date().toISOString();
  const body = JSON.stringify({
    schema: 'svc.event.v1',
    eventId: id,
    type: 'message.received',
    createdAt: at,
    agentId: 'agt_files',
    conversationId: 'cnv_files',
    message: {
      id: `msg_files_${n}`,
      conversation_id: 'cnv_files',
      sequence: n,
      sender: { id: 'usr_files' },
      parts: [{ part_index: 0, type: 'text', text: 'hello' }],
      fallback_text: 'hello',
      status: 'sent',
      created_at: at,
    },
  });
  const headers = {
    'content-type': 'application/json',
    ...(await signWebhook({ id, payload: body, secret })),
  };
  if (n === 3) ranSinceLastReading();
  if (!server) {
    const answer = await bot.fetch(new Request('http://bot.test/webhook', { method: 'POST', headers, body }));
    return answer.status;
  }
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      { host: '127.0.0.1', port, method: 'POST', path: '/webhook', headers },
      (res) => {
        res.resume().on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    sent.on('error', reject).end(body);
  });
}

for (let n = 1; n <= 3; n++) {
  const status = await deliver(n);
  if (status !== 200) throw new Error(`delivery ${n} was answered ${status}`);
  await bot.idle();
}
server?.close();
if (!reading) throw new Error('the third delivery never reached its handler');
console.log(
  `${reading.size} files of src/ before the handler of the default bot's third delivery (${viaNode ? 'toNodeHandler' : 'bot.fetch'}):`,
);
for (const [file, names] of reading) console.log(`  ${file}: ${names.join(', ')}`);
