// `agent-messaging demo`: the whole product on this machine, with no network and no configuration.
// The mock service on a loopback port, the demo bot on another, a user who says hello, and the bot's
// streamed reply shown as it grows, event by event.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentClient } from '../client/agent-client.js';
import { toNodeHandler } from '../node.js';
import type { Message } from '../schemas/messages.js';
import type { MockEvent } from '../testing/index.js';
import { createMockService } from '../testing/index.js';
import { createBot } from '../webhooks/bot.js';
import type { Bot } from '../webhooks/bot-types.js';

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** What the user says. */
  text?: string;
  /** Pause between the bot's tokens, so the growth is visible. */
  tokenDelayMs?: number;
}

/** The answer the demo bot streams back for a user's text. */
export function demoAnswer(text: string): string {
  return (
    `You said "${text}". I am a bot written with agent-messaging: this reply streams to you token by token ` +
    'over one Streamable HTTP request, and the service echoes every patch it applies, so nothing is lost ' +
    'and nothing is sent twice.'
  );
}

/** The answer a few characters at a time, with a pause, as a language model streams its text. */
async function* fakeTokens(answer: string, delayMs: number): AsyncGenerator<string> {
  for (const token of answer.match(/\S+\s*/g) ?? []) {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    yield token;
  }
}

const useColour =
  typeof process !== 'undefined' &&
  process.stdout.isTTY === true &&
  !process.env.NO_COLOR &&
  process.env.TERM !== 'dumb';
const paint = (code: string) => (text: string) => (useColour ? `\u001b[${code}m${text}\u001b[0m` : text);
const [bold, dim, green, cyan] = ['1', '2', '32', '36'].map(paint) as [Paint, Paint, Paint, Paint];
type Paint = (text: string) => string;
/** Writes without a newline, so a reply can grow on its line. */
const write = (text: string) => process.stdout.write(text);
/** One line of the setup checklist. */
const step = (label: string, detail: string) =>
  console.log(`  ${green('✓')} ${label.padEnd(18)} ${dim(detail)}`);

/** The text parts of a message, joined. */
const textOf = (message: Message) =>
  (message.parts ?? []).map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');

/** Runs the demo; resolves with the exit code (0 when the reply arrived whole). */
export async function runDemo(options: DemoOptions = {}): Promise<number> {
  const text = options.text ?? 'What can you do?';
  // The service's rule for a user message, checked before anything starts.
  if (text.trim() === '') throw new Error('text: must not be empty');
  if (text.length > 32_000) throw new Error('text: must be at most 32000 characters');
  console.log(`\n${bold('agent-messaging demo')} ${dim('- everything runs on this machine, no network')}\n`);

  const mock = createMockService();
  const service = await mock.listen({ port: 0 });
  step('mock service', service.baseUrl);

  // The bot's port must be known to register its webhook, and the bot needs the credentials that
  // registration returns: listen first, attach the bot once it exists.
  let bot: Bot | undefined;
  const botServer = createServer((req, res) => {
    if (bot) return toNodeHandler(bot)(req, res);
    res.writeHead(503).end();
  });
  const webhookUrl = `http://127.0.0.1:${await listen(botServer)}/webhook`;

  try {
    // The usual world: the agent, Ada who installed it, their conversation. The bot answers the
    // webhook's signed test below, once it exists.
    const { agent, apiKey, webhookSecret, user, conversationId } = await mock.seed({
      handle: 'demo_bot',
      displayName: 'Demo Bot',
      webhookUrl,
      capabilities: ['text'],
      userName: 'Ada',
    });
    step('agent registered', `${agent.id} (@${agent.handle})`);
    step('user created', `${user.id} (${user.display_name})`);
    step('agent installed', conversationId);
    // The demo's bot pipes a fake model's tokens into ctx.reply(), as a bot pipes an LLM's text.
    bot = createBot({ apiKey, webhookSecret, baseUrl: service.baseUrl });
    bot.on('message.received', async (ctx) => {
      await ctx.reply(fakeTokens(demoAnswer(ctx.text), options.tokenDelayMs ?? 25));
    });
    step('bot listening', webhookUrl);

    const client = new AgentClient({ apiKey, baseUrl: service.baseUrl });
    const webhook = await client.agents.setWebhook(agent.id, { webhook_url: webhookUrl });
    step('webhook verified', `signed webhook.test answered 2xx: ${webhook.webhook_status}`);

    const reply = await watchReply(mock.events.subscribe.bind(mock.events), agent.id, () => {
      console.log(`\n${bold('Ada')} ${dim('›')} ${text}`);
      mock.postUserMessage(conversationId, { user_id: user.id, text });
    });
    await mock.idle();

    const history = await client.conversations.listMessages(conversationId, { limit: 10 });
    const stored = history.messages.find((message) => message.id === reply.message.id);
    const expected = demoAnswer(text);
    const exact = stored !== undefined && textOf(stored) === expected;
    const v1Requests = mock.requests.filter((request) => request.path.startsWith('/v1/')).length;

    console.log(`\n${bold('Summary')}`);
    const streamed = mock.requests.filter((request) => request.query.stream === 'true').length;
    console.log(`  events     message.created, ${reply.patches} patches applied live, then completed`);
    console.log(`  revision   ${stored?.revision ?? '?'}`);
    console.log(`  requests   ${v1Requests} to /v1; the reply took ${streamed} streamed request`);
    console.log(
      `  history    ${exact ? 'holds exactly the text the bot wrote' : 'DIFFERS from what the bot wrote'}`,
    );
    return exact ? 0 : 1;
  } finally {
    await new Promise<void>((resolve) => botServer.close(() => resolve()));
    botServer.closeAllConnections();
    await service.close();
  }
}

/** Shows the agent's next message growing as its updates arrive; resolves once it is complete. */
function watchReply(
  subscribe: (listener: (event: MockEvent) => void) => () => void,
  agentId: string,
  trigger: () => void,
): Promise<{ message: Message; patches: number }> {
  return new Promise((resolve, reject) => {
    let replyId: string | undefined;
    let shown = '';
    let patches = 0;
    let revision = 0;
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error('the bot did not complete its reply within 30 s'));
    }, 30_000);
    const show = (message: Message) => {
      const text = textOf(message);
      if (text.startsWith(shown)) write(cyan(text.slice(shown.length)));
      shown = text;
    };
    const unsubscribe = subscribe((event) => {
      if (event.type !== 'message.created' && event.type !== 'message.updated') return;
      const { message } = event;
      if (event.type === 'message.created' && message.sender.id === agentId && replyId === undefined) {
        replyId = message.id;
        write(`${bold('Demo Bot')} ${dim('›')} `);
      }
      if (message.id !== replyId) return;
      if ((message.revision ?? 0) > revision) {
        patches += (message.revision ?? 0) - revision;
        revision = message.revision ?? 0;
      }
      show(message);
      if (message.status === 'sent') {
        clearTimeout(timer);
        unsubscribe();
        write('\n');
        resolve({ message, patches });
      }
    });
    try {
      trigger();
    } catch (error) {
      clearTimeout(timer);
      unsubscribe();
      reject(error);
    }
  });
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}
