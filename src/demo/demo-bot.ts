// The demo's bot: answers every message with a reply streamed token by token, the way a bot pipes an
// LLM's text stream into `ctx.reply()`.
import { createBot } from '../webhooks/bot.js';
import type { Bot } from '../webhooks/bot-types.js';

/** The answer the demo bot streams back for a user's text. */
export function demoAnswer(text: string): string {
  return (
    `You said "${text}". I am a bot written with agent-messaging: this reply streams to you token by token ` +
    'over one Streamable HTTP request, and the service echoes every patch it applies, so nothing is lost ' +
    'and nothing is sent twice.'
  );
}

/** Yields the answer a few characters at a time, with a pause, like a language model would. */
export async function* fakeTokens(answer: string, delayMs: number): AsyncGenerator<string> {
  for (const token of answer.match(/\S+\s*/g) ?? []) {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    yield token;
  }
}

/** A bot that streams {@link demoAnswer} back to every message it receives. */
export function createDemoBot(options: {
  apiKey: string;
  webhookSecret: string;
  baseUrl: string;
  tokenDelayMs: number;
}): Bot {
  const bot = createBot({
    apiKey: options.apiKey,
    webhookSecret: options.webhookSecret,
    baseUrl: options.baseUrl,
  });
  bot.on('message.received', async (ctx) => {
    await ctx.reply(fakeTokens(demoAnswer(ctx.text), options.tokenDelayMs));
  });
  return bot;
}
