// ctx.reply(modelStream, { quickReplies, quickRepliesAt: 'completion' }): the buttons come once the
// answer is whole, in a message of their own, and a cut answer offers none.
import type { FakeModelTurn } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
import { botWithModel } from './model-clients.js';

const quickReplies = [
  { actionId: 'more', label: 'Tell me more', value: 'more' },
  { actionId: 'done', label: 'Thanks', value: 'done' },
];

async function answer(turn: FakeModelTurn, quickRepliesAt?: 'start' | 'completion') {
  const { model, openai, mock, seed, bot } = await botWithModel();
  bot.onError(() => {});
  bot.on('message.received', async (ctx) => {
    const stream = await openai.chat.completions.create({
      model: 'gpt-test',
      stream: true,
      messages: [{ role: 'user', content: ctx.text }],
    });
    await ctx.reply(stream, { quickReplies, ...(quickRepliesAt ? { quickRepliesAt } : {}) });
  });
  model.push(turn);
  mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text: 'Explain tides' });
  await mock.idle();
  await bot.idle();
  const { messages } = await bot.client.conversations.listMessages(seed.conversationId);
  return messages
    .filter((message) => message.sender.id === seed.agent.id)
    .reverse()
    .map((message) => message.parts?.map((part) => (part.type === 'actions' ? 'buttons' : part.text)));
}

describe("ctx.reply with quickRepliesAt: 'completion'", () => {
  it('sends the buttons after the whole answer, never on the streaming message', async () => {
    expect(await answer({ text: 'The moon pulls the sea.' }, 'completion')).toEqual([
      ['The moon pulls the sea.'],
      ['buttons'],
    ]);
  });

  it('offers no buttons on an answer cut short', async () => {
    const replies = await answer({ chunks: ['The moon ', 'pulls ', 'the sea.'], cutAfter: 2 }, 'completion');
    expect(replies).toEqual([['The moon pulls … [interrupted]']]);
  });

  it("by default ('start') the buttons are under the streaming message from its first chunk", async () => {
    expect(await answer({ text: 'The moon pulls the sea.' })).toEqual([
      ['The moon pulls the sea.', 'buttons'],
    ]);
  });
});
