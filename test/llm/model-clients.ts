// The real model packages pointed at a fake model server, and each way a bot gets a stream from them.
import { createOpenAI } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import { type Bot, createBot, type toTextStream } from 'agent-messaging';
import { createFakeModelServer, createMockService } from 'agent-messaging/testing';
import { streamText, tool } from 'ai';
import OpenAI from 'openai';
import { onTestFinished } from 'vitest';
import { z } from 'zod';

export async function fakeModel() {
  const model = await createFakeModelServer();
  onTestFinished(() => model.close());
  return {
    model,
    openai: new OpenAI({ apiKey: 'sk-test', baseURL: model.openaiBaseUrl, maxRetries: 0 }),
    aiSdk: createOpenAI({ apiKey: 'sk-test', baseURL: model.openaiBaseUrl }),
    anthropic: new Anthropic({ apiKey: 'sk-ant-test', baseURL: model.url, maxRetries: 0 }),
  };
}

export type Clients = Awaited<ReturnType<typeof fakeModel>>;

/**
 * The fake model's clients and a bot on the mock; `fetch`, when given, stands between the bot and
 * the mock (the mock's own fetch is its second argument).
 */
export async function botWithModel(
  fetch?: (request: Request, mockFetch: (request: Request) => Promise<Response>) => Promise<Response>,
) {
  const clients = await fakeModel();
  let bot: Bot | undefined;
  const mock = createMockService({ fetch: (request) => (bot as Bot).fetch(request) });
  const seed = await mock.seed({ handle: 'model_bot' });
  bot = createBot({
    apiKey: seed.apiKey,
    webhookSecret: seed.webhookSecret,
    baseUrl: mock.baseUrl,
    fetch: fetch ? (input, init) => fetch(new Request(input, init), mock.fetch) : mock.fetch,
  });
  return { ...clients, mock, seed, bot };
}
export const question = [{ role: 'user' as const, content: 'Weather in Oslo?' }];
export const weather = tool({
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

/** Each way a bot gets a stream from a real package: the stream, or the error of starting it. */
export const sources: [string, (c: Clients) => Promise<Parameters<typeof toTextStream>[0]>][] = [
  [
    'openai chat.completions',
    async ({ openai }) =>
      openai.chat.completions.create({ model: 'gpt-test', messages: question, stream: true }),
  ],
  [
    'openai responses',
    async ({ openai }) => openai.responses.create({ model: 'gpt-test', input: question, stream: true }),
  ],
  [
    'ai-sdk chat (result)',
    async ({ aiSdk }) => streamText({ model: aiSdk.chat('gpt-test'), messages: question, onError: () => {} }),
  ],
  [
    'ai-sdk responses (fullStream)',
    async ({ aiSdk }) =>
      streamText({ model: aiSdk('gpt-test'), messages: question, onError: () => {} }).fullStream,
  ],
  [
    'anthropic MessageStream',
    async ({ anthropic }) =>
      anthropic.messages.stream({ model: 'claude-test', max_tokens: 100, messages: question }),
  ],
  [
    'anthropic raw events',
    async ({ anthropic }) =>
      anthropic.messages.create({ model: 'claude-test', max_tokens: 100, messages: question, stream: true }),
  ],
];
