// ctx.reply(modelStream) when the model's connection breaks halfway and the reply is slow to read
// it: the reply ends marked, the error reaches onError, and the delivery is not answered as done.
import type { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { expect, it } from 'vitest';
import { botWithModel } from './model-clients.js';

it('a cut Anthropic MessageStream ends the reply interrupted and fails the delivery, however slowly it is read', async () => {
  let stream: MessageStream | undefined;
  // A slow reader: the model goes on from its first chunk only when the reply starts, and the
  // reply's start waits until the model's stream is over, so it fails while no read is waiting.
  const { model, anthropic, mock, seed, bot } = await botWithModel(async (request, mockFetch) => {
    if (request.method === 'POST' && new URL(request.url).pathname.endsWith('/messages')) {
      model.release();
      await stream?.done().catch(() => {});
    }
    return mockFetch(request);
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
