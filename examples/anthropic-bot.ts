// Run: `npm run mock` in one terminal, then `npx tsx examples/anthropic-bot.ts` (PORT=3000 by default).
// With ANTHROPIC_API_KEY set it talks to Anthropic; without it, to a fake model on a loopback port.
//
// An LLM bot on `@anthropic-ai/sdk`. `ctx.history()` gives the conversation as Anthropic messages,
// ending with the messages this run answers (roles alternating, as the API requires); the events of each round's `MessageStream` go into the
// reply as they come, and when the model asks for the tool the bot runs it and streams the next
// round into the same message.

import { once } from 'node:events';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import { type Bot, type BotOptions, createBot } from 'agent-messaging';
import { toNodeHandler } from 'agent-messaging/node';
import { startFakeModel } from './support/fake-model.js';
import { chatOnMock, credentialsFromEnv, webhookUrl } from './support/try-on-mock.js';

/** The bot's one tool; a real one would ask a weather service. */
const tools: Anthropic.Tool[] = [
  {
    name: 'get_weather',
    description: 'The current weather in a city',
    input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
];
const getWeather = (input: unknown) => `sunny and 21 °C in ${(input as { city: string }).city}`;

/** A bot that answers with `model`, remembering the last 20 messages of each conversation. */
export function createAnthropicBot(
  options: BotOptions,
  anthropic: Anthropic,
  model = 'claude-sonnet-4-5',
): Bot {
  return createBot(options).on('message.received', async (ctx) => {
    // Ends with the run's messages: all of them when several came at once ('debounce', 'interrupt').
    const messages: Anthropic.MessageParam[] = await ctx.history({ limit: 20, format: 'anthropic' });
    // Rounds of the model as one stream of events: ctx.reply writes their text into one message (a
    // blank line after a tool call), keeps the tool call out of it, and shows typing while it runs.
    async function* rounds() {
      for (let round = 0; round < 3; round++) {
        const stream = anthropic.messages.stream(
          { model, max_tokens: 1024, tools, messages },
          { signal: ctx.signal },
        );
        yield* stream;
        const { content, stop_reason } = await stream.finalMessage();
        if (stop_reason !== 'tool_use') return;
        messages.push({ role: 'assistant', content });
        const results = content.flatMap((block) =>
          block.type === 'tool_use'
            ? [{ type: 'tool_result' as const, tool_use_id: block.id, content: getWeather(block.input) }]
            : [],
        );
        messages.push({ role: 'user', content: results });
      }
    }
    await ctx.reply(rounds());
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const agent = await credentialsFromEnv('anthropic_bot');
  // The real-provider line: Anthropic reads ANTHROPIC_API_KEY; otherwise the fake model answers.
  const anthropic = process.env.ANTHROPIC_API_KEY
    ? new Anthropic()
    : new Anthropic({ apiKey: 'fake', baseURL: (await startFakeModel()).url });
  const bot = createAnthropicBot(agent, anthropic);
  const server = createServer(toNodeHandler(bot)).listen(Number(process.env.PORT ?? 3000));
  await once(server, 'listening');
  console.log(`Anthropic bot listening: POST ${webhookUrl(server)}`);
  await chatOnMock(bot.client, agent, webhookUrl(server), "What's the weather in Kyoto?");
}
