// Run: `npm run mock` in one terminal, then `npx tsx examples/streaming-bot.ts` (PORT=3000 by default;
// with OPENAI_API_KEY set, the answers come from OpenAI instead of the fake model).
//
// A bot whose answers stream into the conversation as they are generated. `ctx.reply()` takes any
// AsyncIterable<string>: it opens one streamed message and sends the text as it arrives, coalescing
// tokens into batches (256 characters or 100 ms), and falls back to the append endpoint where the
// runtime or the service cannot stream. Users see the reply grow; nothing is lost or doubled.

import { once } from 'node:events';
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type Bot, type BotOptions, createBot } from 'agent-messaging';
import { toNodeHandler } from 'agent-messaging/node';
import type OpenAI from 'openai';
import { chatOnMock, credentialsFromEnv, webhookUrl } from './support/try-on-mock.js';

/** Anything that turns a prompt into a stream of text: a model, or the fake one below. */
export type TextGenerator = (prompt: string) => AsyncIterable<string>;

/** A stand-in for a language model: the answer, a word at a time, `delayMs` apart. */
export async function* fakeModel(prompt: string, delayMs = 40): AsyncGenerator<string> {
  const answer = `You asked: "${prompt}". A model would think here; this one streams its answer word by word, so you can watch the message grow.`;
  for (const token of answer.match(/\S+\s*/g) ?? []) {
    await sleep(delayMs);
    yield token;
  }
}

/** A bot that answers each message with the streamed output of `generate`. */
export function createStreamingBot(options: BotOptions, generate: TextGenerator = fakeModel): Bot {
  return createBot(options).on('message.received', async (ctx) => {
    await ctx.typing(); // "typing…" until the handler ends
    await ctx.reply(generate(ctx.text));
  });
}

/**
 * The same with OpenAI: a chat-completions stream yields chunks; their `delta.content` is the text.
 * Pass it as the generator: `createStreamingBot(options, openAiGenerator(new OpenAI()))`.
 */
export function openAiGenerator(openai: OpenAI, model = 'gpt-4o-mini'): TextGenerator {
  return async function* (prompt) {
    const stream = await openai.chat.completions.create({
      model,
      stream: true,
      messages: [{ role: 'user', content: prompt }],
    });
    for await (const chunk of stream) {
      const text = chunk.choices[0]?.delta?.content;
      if (text) yield text;
    }
  };
}

// Model streams go to `ctx.reply()` as they are (see examples/openai-bot.ts, ai-sdk-bot.ts and
// anthropic-bot.ts). With the AI SDK, pass the `streamText` result itself: its full stream is read,
// so a failed call (a 401) is an error, where its `textStream` would just end empty. `openai(...)`
// of `@ai-sdk/openai` calls the Responses API; for a server that only has chat completions use
// `openai.chat(...)`:
//
//   import { streamText } from 'ai';
//   import { openai } from '@ai-sdk/openai';
//   bot.on('message.received', (ctx) =>
//     ctx.reply(streamText({ model: openai.chat('gpt-4o-mini'), prompt: ctx.text })));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const agent = await credentialsFromEnv('streamer');
  let generate: TextGenerator = fakeModel;
  if (process.env.OPENAI_API_KEY) {
    const { default: OpenAI } = await import('openai');
    generate = openAiGenerator(new OpenAI()); // reads OPENAI_API_KEY
  }
  const bot = createStreamingBot(agent, generate);
  const server = createServer(toNodeHandler(bot)).listen(Number(process.env.PORT ?? 3000));
  await once(server, 'listening');
  console.log(`Streaming bot listening: POST ${webhookUrl(server)}`);
  await chatOnMock(bot.client, agent, webhookUrl(server), 'Tell me a story.');
}
