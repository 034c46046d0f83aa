// ctx.reply(modelStream) when the model's connection breaks halfway and the reply is slow to read
// it: the reply ends marked, the error reaches onError, and the delivery is not answered as done.
import Anthropic from '@anthropic-ai/sdk';
import { type Bot, createBot } from 'agent-messaging';
import { createFakeModelServer, createMockService } from 'agent-messaging/testing';
import { expect, it, onTestFinished } from 'vitest';

it('a cut Anthropic MessageStream ends the reply interrupted and fails the delivery, however slowly it is read', async () => {
  const model = await createFakeModelServer();
  onTestFinished(() => model.close());
  const anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: model.url, maxRetries: 0 });
  let bot: Bot | undefined;
  const mock = createMockService({ fetch: (request) => (bot as Bot).fetch(request) });
  const seed = await mock.seed({ handle: 'refund_bot' });
  let stream: ReturnType<typeof anthropic.messages.stream> | undefined;
  bot = createBot({
    apiKey: seed.apiKey,
    webhookSecret: seed.webhookSecret,
    baseUrl: mock.baseUrl,
    // A slow reader: the model goes on from its first chunk only when the reply starts, and the
    // reply's start waits until the model's stream is over, so it fails while no read is waiting.
    fetch: async (input, init) => {
      const request = new Request(input, init);
      if (request.method === 'POST' && new URL(request.url).pathname.endsWith('/messages')) {
        model.release();
        await stream?.done().catch(() => {});
      }
      return mock.fetch(request);
    },
  });
  const errors: unknown[] = [];
  bot.onError((error) => void errors.push(error));
  bot.on('message.received', async (ctx) => {
    stream = anthropic.messages.stream({
      model: 'claude-test',
      max_tokens: 100,
      messages: [{ role: 'user', content: ctx.text }],
    });
    await ctx.reply(stream);
  });
  const words = ['I ', 'am ', 'sorry ', 'about ', 'your ', 'refund, ', 'it ', 'is ', 'on ', 'its ', 'way.'];
  model.push({ chunks: words, holdAfter: 1, cutAfter: 6 });

  mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text: 'Where is my refund?' });
  await mock.idle();
  await bot.idle();

  const { messages } = await bot.client.conversations.listMessages(seed.conversationId);
  const reply = messages.find((message) => message.sender.id === seed.agent.id);
  // The six chunks that came, then the interrupted note.
  expect(reply?.parts?.[0]?.text).toMatch(/^I am sorry about your refund, +… \[interrupted\]$/);
  expect(reply?.parts).toHaveLength(1);
  expect(errors).toHaveLength(1);
  const answers = mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status);
  expect(answers).not.toContain(200);
});
