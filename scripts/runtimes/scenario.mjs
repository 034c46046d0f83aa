// What a user does with the SDK on one runtime (Bun, Deno or Node), against the loopback mock that
// the Node orchestrator (run.mjs) serves: verify a signed delivery, register, serve `bot.fetch` with
// the runtime's own server, set the webhook (the mock's signed webhook.test must reach the bot), send,
// have a user post so the bot streams a reply, and read the history back. It is copied into the
// consumer folder so that `agent-messaging` resolves from that folder's node_modules, as a user's
// would. Any failed check exits non-zero.
import {
  AgentClient,
  createBot,
  registerAgent,
  verifyWebhook,
  WebhookVerificationError,
} from 'agent-messaging';
import config from './smoke-config.json' with { type: 'json' };

const { baseUrl, fixture } = config;
const runtime = globalThis.Bun
  ? { name: 'bun', version: globalThis.Bun.version }
  : globalThis.Deno
    ? { name: 'deno', version: globalThis.Deno.version.deno }
    : { name: 'node', version: process.versions.node };
const exit = (code) => (globalThis.Deno ? globalThis.Deno.exit(code) : process.exit(code));
const log = (text) => console.log(`  [${runtime.name} ${runtime.version}] ${text}`);

function check(condition, message, actual) {
  if (!condition)
    throw new Error(`${message}${actual === undefined ? '' : `; got ${JSON.stringify(actual)}`}`);
}

/** A settled-later promise: the bot's handler resolves it from inside a delivery. */
function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Fails instead of hanging when something the scenario waits for never happens. */
function guard(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function expectRefused(code, body, headers, options) {
  try {
    await verifyWebhook(body, headers, options);
  } catch (error) {
    check(WebhookVerificationError.is(error), 'verifyWebhook threw something else', String(error));
    check(error.code === code, `verifyWebhook refused with the wrong code (wanted ${code})`, error.code);
    return;
  }
  throw new Error(`verifyWebhook accepted a delivery it should refuse with ${code}`);
}

/** Serves a Web-standard fetch handler on this runtime's own HTTP server, on loopback. */
async function serve(fetchHandler) {
  if (globalThis.Bun) {
    const server = globalThis.Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: fetchHandler });
    return { port: server.port, close: () => server.stop(true) };
  }
  if (globalThis.Deno) {
    const server = globalThis.Deno.serve({ hostname: '127.0.0.1', port: 0, onListen() {} }, fetchHandler);
    return { port: server.addr.port, close: () => server.shutdown() };
  }
  // Node has no Web-standard server: the SDK's adapter is the way a Node user serves a fetch handler.
  const { createServer } = await import('node:http');
  const { toNodeFetchHandler } = await import('agent-messaging/node');
  const server = createServer(toNodeFetchHandler({ fetch: fetchHandler }));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The mock's control surface (PROTOCOL.md section 13), over HTTP as any runtime can reach it. */
async function control(path, body) {
  const response = await fetch(`${baseUrl}/_mock${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  check(response.ok, `/_mock${path} failed`, response.status);
  return response.json();
}

/**
 * The status the mock recorded for its delivery of `type`, once that delivery has its answer. The
 * handler resolves before bot.fetch writes its response, so closing the server sooner could cut it.
 */
async function answeredDelivery(type) {
  for (;;) {
    const delivery = (await control('/deliveries')).find((d) => d.type === type && d.status !== null);
    if (delivery) return delivery;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function* tokens(text) {
  for (const word of text.split(/(?<= )/)) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    yield word;
  }
}

async function main() {
  // 0. The package came from this folder's node_modules (Deno in particular could resolve elsewhere).
  const resolved = import.meta.resolve('agent-messaging');
  const installed = new URL('./node_modules/agent-messaging/dist/index.js', import.meta.url).href;
  check(resolved === installed, `agent-messaging resolves to ${installed}`, resolved);

  // 1. verifyWebhook on a delivery signed in Node with signWebhook.
  const { secret, body, headers, eventId } = fixture;
  const event = await verifyWebhook(body, headers, { secret });
  check(event.type === 'message.received' && event.eventId === eventId, 'verified the wrong event', event);
  const bytes = new TextEncoder().encode(body);
  const fromBytes = await verifyWebhook(bytes, new Headers(headers), { secret: [secret] });
  check(fromBytes.eventId === eventId, 'bytes and a Headers object verify to the same event', fromBytes);
  await expectRefused('no_matching_signature', body.replace('ping', 'pong'), headers, { secret });
  const hourLater = () => new Date(Date.now() + 3_600_000);
  await expectRefused('timestamp_too_old', body, headers, { secret, now: hourLater });
  log('verifyWebhook accepts the signed delivery and refuses a tampered or stale one');

  // 2. Register, and serve the bot on this runtime's own server.
  const handle = `smoke_${runtime.name}`;
  const { agent, api_key, webhook_secret } = await registerAgent(
    {
      handle,
      display_name: `Smoke ${runtime.name}`,
      webhook_url: 'http://127.0.0.1:9/hook',
      capabilities: ['text'],
    },
    { baseUrl },
  );
  check(agent.id.startsWith('agt_') && agent.status === 'pending_webhook', 'registration answered', agent);

  const seen = [];
  const replied = deferred();
  const bot = createBot({ apiKey: api_key, webhookSecret: webhook_secret, baseUrl });
  bot.onAny((ctx) => {
    seen.push(ctx.event.type);
  });
  bot.on('message.received', async (ctx) => {
    const result = await ctx.reply(tokens(`${runtime.name} heard: ${ctx.text}`));
    replied.resolve({ result, conversationId: ctx.conversationId, from: ctx.message.sender.id });
  });
  bot.onError((error) => replied.reject(error));
  const server = await serve(bot.fetch);
  try {
    // 3. Set the webhook: the mock delivers a signed webhook.test that the bot must answer 2xx.
    const client = new AgentClient({ apiKey: api_key, baseUrl });
    const webhookUrl = `http://127.0.0.1:${server.port}/webhook`;
    const set = await client.agents.setWebhook(agent.id, { webhook_url: webhookUrl, capabilities: ['text'] });
    check(set.webhook_status === 'verified' && set.webhook_url === webhookUrl, 'setWebhook answered', set);
    log(`the mock's webhook.test reached bot.fetch on port ${server.port}: webhook verified`);

    // 4. A user installs the agent; the agent sends, the user posts, the bot replies.
    const { user } = await control('/users', { display_name: `User of ${runtime.name}` });
    const { conversation_id: cnv } = await control('/installs', { user_id: user.id, agent_id: agent.id });
    const sent = await client.messages.send(cnv, { text: `hello from ${runtime.name}` });
    check(sent.message.id.startsWith('msg_') && sent.message.status === 'sent', 'send answered', sent);
    await control(`/conversations/${cnv}/user-messages`, { user_id: user.id, text: 'ping' });
    const reply = await guard(replied.promise, 20_000, "the bot's reply to message.received");
    const expected = `${runtime.name} heard: ping`;
    check(reply.conversationId === cnv && reply.from === user.id, 'the handler saw the wrong message', reply);
    check(
      reply.result.status === 'sent' && reply.result.text === expected,
      'the reply finished as',
      reply.result,
    );
    check(seen.includes('webhook.test') && seen.includes('message.received'), 'the bot saw events', seen);
    const delivery = await guard(
      answeredDelivery('message.received'),
      10_000,
      'the answer to message.received',
    );
    check(delivery.status >= 200 && delivery.status < 300, 'bot.fetch answered message.received', delivery);
    log(`message.received reached the bot (answered ${delivery.status}), which streamed "${expected}"`);

    // 5. History, newest first, across every page.
    const history = [];
    for await (const message of client.conversations.history(cnv, { limit: 2 })) history.push(message);
    const texts = history.map((m) => [m.sequence, m.sender.id, m.parts.map((p) => p.text).join('')]);
    const wanted = [
      [3, agent.id, expected],
      [2, user.id, 'ping'],
      [1, agent.id, `hello from ${runtime.name}`],
    ];
    check(JSON.stringify(texts) === JSON.stringify(wanted), 'history holds the conversation', texts);
    check(history[0].id === reply.result.message_id && history[0].status === 'sent', 'reply in history');
    log('history reads back the send, the user message and the streamed reply');
  } finally {
    await server.close();
  }
}

main().then(
  () => exit(0),
  (error) => {
    console.error(`  [${runtime.name} ${runtime.version}] FAILED: ${error?.stack ?? error}`);
    exit(1);
  },
);
