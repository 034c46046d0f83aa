// Run: `npm run mock` in one terminal, then `npx tsx examples/openai-bot.ts` (PORT=3000 by default).
// With OPENAI_API_KEY set it talks to OpenAI; without it, to a fake model on a loopback port.
//
// An LLM bot with memory and a tool, on the `openai` package. `ctx.history()` gives the conversation
// as chat-completions messages, ending with the messages this run answers (the bot's own as
// `assistant`, each user's with their `name`); `runTools` streams the answer, runs the tool when the model asks, and streams the
// rest; `ctx.reply()` takes that stream as it is: the text grows in one message, the tool's call
// never shows, and typing stays on while the tool runs.

import { once } from 'node:events';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { type Bot, type BotOptions, createBot } from 'agent-messaging';
import { toNodeHandler } from 'agent-messaging/node';
import OpenAI from 'openai';
import { startFakeModel } from './support/fake-model.js';
import { chatOnMock, credentialsFromEnv, webhookUrl } from './support/try-on-mock.js';

/** The bot's one tool; a real one would ask a weather service. */
export const getWeather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    parse: JSON.parse,
    function: ({ city }: { city: string }) => `sunny and 21 °C in ${city}`,
  },
};

/** A bot that answers with `model`, remembering the last 20 messages of each conversation. */
export function createOpenAIBot(options: BotOptions, openai: OpenAI, model = 'gpt-4o-mini'): Bot {
  return createBot(options).on('message.received', async (ctx) => {
    // Ends with the run's messages: all of them when several came at once ('debounce', 'interrupt').
    const history = await ctx.history({ limit: 20, format: 'openai' });
    const answer = openai.chat.completions.runTools(
      {
        model,
        stream: true,
        tools: [getWeather],
        messages: [{ role: 'system', content: 'You are a helpful assistant. Be brief.' }, ...history],
      },
      { signal: ctx.signal }, // a newer message or a lost lock stops the model too
    );
    await ctx.reply(answer, { onToolCall: (call) => console.log(`(calling ${call.name})`) });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const agent = await credentialsFromEnv('openai_bot');
  // The real-provider line: OpenAI reads OPENAI_API_KEY; otherwise the fake model answers.
  const openai = process.env.OPENAI_API_KEY
    ? new OpenAI()
    : new OpenAI({ apiKey: 'fake', baseURL: (await startFakeModel()).openaiBaseUrl });
  const bot = createOpenAIBot(agent, openai);
  const server = createServer(toNodeHandler(bot)).listen(Number(process.env.PORT ?? 3000));
  await once(server, 'listening');
  console.log(`OpenAI bot listening: POST ${webhookUrl(server)}`);
  await chatOnMock(bot.client, agent, webhookUrl(server), "What's the weather in Oslo?");
}
