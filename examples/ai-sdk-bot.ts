// Run: `npm run mock` in one terminal, then `npx tsx examples/ai-sdk-bot.ts` (PORT=3000 by default).
// With OPENAI_API_KEY set it talks to OpenAI; without it, to a fake model on a loopback port.
//
// An LLM bot on the Vercel AI SDK (`ai` + `@ai-sdk/openai`): `ctx.history()` gives the conversation
// as `ModelMessage`s, `streamText` runs the model and its tool over several steps, and `ctx.reply()`
// reads its full stream: text deltas into one message, a blank line between steps, the tool call
// kept out of the text, and a failed call (a 401, say) an error instead of an empty reply (the
// result's `textStream` just ends empty then).
//
// `openai('gpt-4o-mini')` calls OpenAI's Responses API (`/v1/responses`); for a server that only
// speaks chat completions (most OpenAI-compatible ones), use `openai.chat('gpt-4o-mini')`.

import { once } from 'node:events';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createOpenAI } from '@ai-sdk/openai';
import { type Bot, type BotOptions, createBot } from 'agent-messaging';
import { toNodeHandler } from 'agent-messaging/node';
import { type LanguageModel, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { startFakeModel } from './support/fake-model.js';
import { chatOnMock, credentialsFromEnv, webhookUrl } from './support/try-on-mock.js';

/** The bot's one tool; a real one would ask a weather service. */
export const getWeather = tool({
  description: 'The current weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny and 21 °C in ${city}`,
});

/** A bot that answers with `model`, remembering the last 20 messages of each conversation. */
export function createAiSdkBot(options: BotOptions, model: LanguageModel): Bot {
  return createBot(options).on('message.received', async (ctx) => {
    const history = await ctx.history({ limit: 20, format: 'ai-sdk' });
    const result = streamText({
      model,
      system: 'You are a helpful assistant. Be brief.',
      messages: history, // ends with the messages this run answers
      tools: { get_weather: getWeather },
      stopWhen: stepCountIs(3), // the tool's step, then the answer
      abortSignal: ctx.signal,
    });
    await ctx.reply(result.fullStream);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const agent = await credentialsFromEnv('ai_sdk_bot');
  // The real-provider line: createOpenAI() reads OPENAI_API_KEY; otherwise the fake model answers.
  const openai = process.env.OPENAI_API_KEY
    ? createOpenAI()
    : createOpenAI({ apiKey: 'fake', baseURL: (await startFakeModel()).openaiBaseUrl });
  const bot = createAiSdkBot(agent, openai.chat('gpt-4o-mini'));
  const server = createServer(toNodeHandler(bot)).listen(Number(process.env.PORT ?? 3000));
  await once(server, 'listening');
  console.log(`AI SDK bot listening: POST ${webhookUrl(server)}`);
  await chatOnMock(bot.client, agent, webhookUrl(server), "What's the weather in Lisbon?");
}
