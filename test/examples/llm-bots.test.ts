// The three LLM examples on their real packages against the fake model server and the mock: memory
// through ctx.history, a tool call, one Streamable HTTP request per reply, and a model that fails
// before its first token or halfway ending as issue 11 says (no message; a marked cut reply), with
// the service's retry answering normally.
import { createOpenAI } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import type { Bot, BotOptions } from 'agent-messaging';
import { createFakeModelServer, type FakeModelServer } from 'agent-messaging/testing';
import OpenAI from 'openai';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createAiSdkBot } from '../../examples/ai-sdk-bot.js';
import { createAnthropicBot } from '../../examples/anthropic-bot.js';
import { createOpenAIBot } from '../../examples/openai-bot.js';
import { agentMessages, newAgent, requestsTo, serveFetch, startMock, verifyWebhook } from './setup.js';

type Make = (options: BotOptions, model: FakeModelServer) => Bot;
const examples: [string, Make][] = [
  [
    'openai-bot',
    (options, model) =>
      createOpenAIBot(options, new OpenAI({ apiKey: 'sk-fake', baseURL: model.openaiBaseUrl })),
  ],
  [
    'ai-sdk-bot',
    (options, model) =>
      createAiSdkBot(
        options,
        createOpenAI({ apiKey: 'sk-fake', baseURL: model.openaiBaseUrl }).chat('gpt-4o-mini'),
      ),
  ],
  [
    'anthropic-bot',
    (options, model) => createAnthropicBot(options, new Anthropic({ apiKey: 'sk-fake', baseURL: model.url })),
  ],
];

async function running(make: Make, options: Partial<BotOptions> = {}) {
  const model = await createFakeModelServer();
  onTestFinished(() => model.close());
  const { mock, baseUrl } = await startMock();
  const agent = await newAgent(mock, baseUrl);
  const bot = make({ ...agent.options, ...options }, model);
  await verifyWebhook(bot.client, agent.agentId, await serveFetch(bot));
  const { user, conversationId } = agent;
  const ask = async (...texts: string[]) => {
    for (const text of texts) mock.postUserMessage(conversationId, { user_id: user.id, text });
    await mock.idle();
  };
  const replies = async () =>
    (await agentMessages(bot.client, conversationId, agent.agentId)).map((m) =>
      m.parts?.map((p) => p.text).join(''),
    );
  const streamedPosts = () => requestsTo(mock, 'POST', /^\/v1\/conversations\/[^/]+\/messages$/);
  const lastDelivery = () => mock.deliveries.at(-1)?.status;
  return { model, mock, ask, replies, streamedPosts, lastDelivery };
}

/** The (role, text) turns a model request carried, system prompt aside, whatever the API's shape. */
function turnsOf(body: Record<string, unknown>): [string, string][] {
  const list = (body.messages ?? body.input) as { role: string; content: unknown }[];
  return list
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .map((m) => [
      m.role,
      typeof m.content === 'string'
        ? m.content
        : (m.content as { text?: string }[]).map((part) => part.text ?? '').join(''),
    ]);
}

describe.each(examples)('examples/%s.ts', (name, make) => {
  it('runs the tool and streams the answer into one message over one Streamable HTTP request', async () => {
    const { model, mock, ask, replies, streamedPosts } = await running(make);
    model.push(
      { text: 'Let me check.', toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] },
      { text: 'Sunny in Oslo 🌞, 21 °C.' },
    );

    await ask("What's the weather in Oslo?");

    // The step after the tool is a new paragraph; the call's arguments never reach the user.
    expect(await replies()).toEqual(['Let me check.\n\nSunny in Oslo 🌞, 21 °C.']);
    expect(streamedPosts().map((entry) => [entry.query.stream, entry.headers['content-type']])).toEqual([
      ['true', 'application/x-ndjson'],
    ]);
    // The tool ran and its result went back to the model.
    expect(JSON.stringify(model.requests[1]?.body)).toContain('sunny and 21 °C in Oslo');
    // Typing until the first text, and again while the tool ran, until the answer went on.
    const typing = requestsTo(mock, 'POST', /\/typing$/).map((entry) => JSON.parse(entry.body ?? '{}').state);
    expect(typing).toEqual(['start', 'stop', 'start', 'stop']);
  });

  it('remembers the conversation: the next request carries the earlier turns, oldest first', async () => {
    const { model, ask, replies } = await running(make);
    model.push({ text: 'Hello Ada!' }, { text: 'Rain tomorrow.' });

    await ask('Hi');
    await ask('And tomorrow?');

    expect(await replies()).toEqual(['Hello Ada!', 'Rain tomorrow.']);
    expect(turnsOf(model.requests[1]?.body ?? {})).toEqual([
      ['user', 'Hi'],
      ['assistant', 'Hello Ada!'],
      ['user', 'And tomorrow?'],
    ]);
  });

  it("gives the model every message of a 'debounce' batch, once, after the earlier turns", async () => {
    // A window far longer than the gap between two messages posted together, on any machine.
    const { model, ask, replies } = await running(make, { concurrency: 'debounce', debounceMs: 1000 });
    model.push({ text: 'Hello Ada!' }, { text: 'Billing is on the second page.' });

    await ask('Hi');
    await ask('I have a question', 'about billing');

    expect(await replies()).toEqual(['Hello Ada!', 'Billing is on the second page.']);
    // Anthropic's roles alternate: two user messages in a row are one message there.
    const batch: [string, string][] =
      name === 'anthropic-bot'
        ? [['user', 'I have a question\n\nabout billing']]
        : [
            ['user', 'I have a question'],
            ['user', 'about billing'],
          ];
    expect(turnsOf(model.requests[1]?.body ?? {})).toEqual([
      ['user', 'Hi'],
      ['assistant', 'Hello Ada!'],
      ...batch,
    ]);
  });

  it('a 401 before the first token posts nothing and fails the delivery; the retry answers', async () => {
    const { model, mock, ask, replies, streamedPosts, lastDelivery } = await running(make);
    model.push({ fail: 401 }, { text: 'Here after all.' });

    await ask('Hello?');

    expect(await replies()).toEqual([]);
    expect(streamedPosts()).toEqual([]);
    expect(lastDelivery()).toBe(500);
    mock.clock.advance(5); // the service's first retry
    await mock.idle();
    expect(await replies()).toEqual(['Here after all.']);
  });

  it('a model cut halfway leaves its text marked interrupted; the retry writes a new message', async () => {
    const { model, mock, ask, replies, lastDelivery } = await running(make);
    model.push(
      { chunks: ['The capital ', 'of Australia ', 'is Can', 'berra.'], cutAfter: 3 },
      { text: 'Canberra.' },
    );

    await ask('Capital of Australia?');

    expect(await replies()).toEqual(['The capital of Australia is Can … [interrupted]']);
    expect(lastDelivery()).toBe(500);
    mock.clock.advance(5);
    await mock.idle();
    expect(await replies()).toEqual(['The capital of Australia is Can … [interrupted]', 'Canberra.']);
  });
});
