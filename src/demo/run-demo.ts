// `agent-messaging demo`: the whole product on this machine, with no network and no configuration.
// The mock service on a loopback port, the demo bot on another, a user who says hello, and the bot's
// streamed reply shown as it grows, event by event.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentClient } from '../client/agent-client.js';
import { toNodeHandler } from '../node.js';
import type { Message } from '../schemas/messages.js';
import { createMockService } from '../testing/index.js';
import { createBot } from '../webhooks/bot.js';

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

const useColour = process.stdout.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
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
  const botServer = createServer();
  try {
    step('mock service', service.baseUrl);
    // The usual world: the agent, Ada who installed it, their conversation. The bot's webhook is set
    // below, once the bot listens, so that the service's signed test reaches it.
    const { agent, apiKey, webhookSecret, user, conversationId } = await mock.seed({
      handle: 'demo_bot',
      displayName: 'Demo Bot',
      capabilities: ['text'],
      userName: 'Ada',
    });
    step('agent registered', `${agent.id} (@${agent.handle})`);
    step('user created', `${user.id} (${user.display_name})`);
    step('agent installed', conversationId);
    // The demo's bot pipes a fake model's tokens into ctx.reply(), as a bot pipes an LLM's text.
    const bot = createBot({ apiKey, webhookSecret, baseUrl: service.baseUrl });
    bot.on('message.received', async (ctx) => {
      await ctx.reply(fakeTokens(demoAnswer(ctx.text), options.tokenDelayMs ?? 25));
    });
    botServer.on('request', toNodeHandler(bot));
    await new Promise<void>((resolve) => botServer.listen(0, '127.0.0.1', resolve));
    const webhookUrl = `http://127.0.0.1:${(botServer.address() as AddressInfo).port}/webhook`;
    step('bot listening', webhookUrl);

    const client = new AgentClient({ apiKey, baseUrl: service.baseUrl });
    const webhook = await client.agents.setWebhook(agent.id, { webhook_url: webhookUrl });
    step('webhook verified', `signed webhook.test answered 2xx: ${webhook.webhook_status}`);

    // The agent's next message, shown growing on its line as the service applies each patch.
    let replyId: string | undefined;
    let shown = '';
    const unsubscribe = mock.events.subscribe((event) => {
      if (event.type !== 'message.created' && event.type !== 'message.updated') return;
      const { message } = event;
      if (replyId === undefined && message.sender.id === agent.id) {
        replyId = message.id;
        write(`${bold('Demo Bot')} ${dim('›')} `);
      }
      if (message.id !== replyId) return;
      write(cyan(textOf(message).slice(shown.length)));
      shown = textOf(message);
    });
    console.log(`\n${bold('Ada')} ${dim('›')} ${text}`);
    mock.postUserMessage(conversationId, { user_id: user.id, text });
    // The delivery was answered, then the handler that it started is done: the reply is complete.
    await mock.idle();
    await bot.idle();
    unsubscribe();
    write('\n');

    const history = await client.conversations.listMessages(conversationId, { limit: 10 });
    const stored = history.messages.find((message) => message.id === replyId);
    const exact = stored !== undefined && textOf(stored) === demoAnswer(text);
    const v1Requests = mock.requests.filter((request) => request.path.startsWith('/v1/')).length;
    const streamed = mock.requests.filter((request) => request.query.stream === 'true').length;
    console.log(`\n${bold('Summary')}`);
    // Each applied patch raises the message's revision by one.
    console.log(
      `  events     message.created, ${stored?.revision ?? 0} patches applied live, then completed`,
    );
    console.log(`  requests   ${v1Requests} to /v1; the reply took ${streamed} streamed request`);
    console.log(
      `  history    ${exact ? 'holds exactly the text the bot wrote' : 'DIFFERS from what the bot wrote'}`,
    );
    return exact ? 0 : 1;
  } finally {
    botServer.close();
    botServer.closeAllConnections();
    await service.close();
  }
}
