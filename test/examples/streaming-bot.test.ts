import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import {
  createStreamingBot,
  fakeModel,
  openAiGenerator,
  type TextGenerator,
} from '../../examples/streaming-bot.js';
import { agentMessages, newAgent, requestsTo, serveFetch, startMock, verifyWebhook } from './setup.js';

/** The example's bot with this generator, served and verified; a user who installed it. */
async function streamingBot(generate: TextGenerator) {
  const { mock, baseUrl } = await startMock();
  const agent = await newAgent(mock, baseUrl);
  const bot = createStreamingBot(agent.options, generate);
  await verifyWebhook(bot.client, agent.agentId, await serveFetch(bot));
  const { user, conversationId } = agent;
  const ask = async (text: string) => {
    const { message } = mock.postUserMessage(conversationId, { user_id: user.id, text });
    await mock.idle();
    return message;
  };
  const replies = () => agentMessages(bot.client, conversationId, agent.agentId);
  return { mock, ask, replies };
}

async function collect(chunks: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const chunk of chunks) text += chunk;
  return text;
}

describe('examples/streaming-bot.ts', () => {
  it('streams the generated answer into one reply over a single Streamable HTTP request', async () => {
    const { mock, ask, replies } = await streamingBot((prompt) => fakeModel(prompt, 0));

    const question = await ask('Tell me a story.');

    const expected = await collect(fakeModel('Tell me a story.', 0));
    expect(expected.split(' ').length).toBeGreaterThan(20);
    const [reply, ...others] = await replies();
    expect(others).toEqual([]);
    expect(reply).toMatchObject({ status: 'sent', reply_to: { message_id: question.id } });
    expect(reply?.parts?.map((part) => part.text)).toEqual([expected]);
    const streamed = requestsTo(mock, 'POST', /^\/v1\/conversations\/[^/]+\/messages$/);
    expect(streamed.map((entry) => [entry.query.stream, entry.headers['content-type']])).toEqual([
      ['true', 'application/x-ndjson'],
    ]);
    expect(requestsTo(mock, 'POST', /\/append$/)).toEqual([]);
    const typing = requestsTo(mock, 'POST', /\/typing$/).map((entry) => JSON.parse(entry.body ?? ''));
    expect(typing).toEqual([{ state: 'start' }, { state: 'stop' }]);
  });

  it('streams an OpenAI chat-completions stream through openAiGenerator', async () => {
    const asked: unknown[] = [];
    const chunk = (content: string) =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
    // OpenAI's SDK on a canned event stream: no network, the real stream parser.
    const openai = new OpenAI({
      apiKey: 'sk-test',
      baseURL: 'http://openai.test/v1',
      fetch: async (_url, init) => {
        asked.push(JSON.parse(String(init?.body)));
        const events = ['Hel', 'lo from ', 'a model', '.'].map(chunk).join('') + 'data: [DONE]\n\n';
        return new Response(events, { headers: { 'content-type': 'text/event-stream' } });
      },
    });
    const { ask, replies } = await streamingBot(openAiGenerator(openai, 'gpt-test'));

    await ask('Say hello.');

    expect(asked).toEqual([
      { model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'Say hello.' }] },
    ]);
    const [reply] = await replies();
    expect(reply?.parts?.map((part) => part.text)).toEqual(['Hello from a model.']);
  });
});
