// ctx.reply(modelStream) when the model's stream is cut halfway, however slowly the reply reads it:
// the reply ends marked, the error reaches onError, and the delivery is not answered as done.
import type { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { FakeModelTurn } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
import { botWithModel, type Clients, sources } from './model-clients.js';

type Bench = Awaited<ReturnType<typeof botWithModel>>;

/** Runs one message through a bot that replies with the stream `open` makes; what came of it. */
async function run(bench: Bench, turn: FakeModelTurn, open: (clients: Clients) => Promise<unknown>) {
  const { model, mock, seed, bot } = bench;
  const errors: unknown[] = [];
  bot.onError((error) => void errors.push(error));
  bot.on('message.received', async (ctx) => {
    await ctx.reply((await open(bench)) as Parameters<typeof ctx.reply>[0]);
  });
  model.push(turn);
  mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text: 'Where is my refund?' });
  await mock.idle();
  await bot.idle();
  const { messages } = await bot.client.conversations.listMessages(seed.conversationId);
  const replies = messages.filter((message) => message.sender.id === seed.agent.id);
  const answers = mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status);
  return { texts: replies.map((reply) => reply.parts?.map((part) => part.text)), errors, answers };
}

const words = ['I ', 'am ', 'sorry ', 'about ', 'your ', 'refund, ', 'it ', 'is ', 'on ', 'its ', 'way.'];

it('a cut Anthropic MessageStream ends the reply interrupted and fails the delivery, however slowly it is read', async () => {
  let stream: MessageStream | undefined;
  // A slow reader: the model goes on from its first chunk only when the reply starts, and the
  // reply's start waits until the model's stream is over, so it fails while no read is waiting.
  const bench = await botWithModel(async (request, mockFetch) => {
    if (request.method === 'POST' && new URL(request.url).pathname.endsWith('/messages')) {
      bench.model.release();
      await stream?.done().catch(() => {});
    }
    return mockFetch(request);
  });
  const open = async ({ anthropic }: Clients) => {
    stream = anthropic.messages.stream({
      model: 'claude-test',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Where is my refund?' }],
    });
    return stream;
  };

  const { texts, errors, answers } = await run(bench, { chunks: words, holdAfter: 1, cutAfter: 6 }, open);

  // The six chunks that came, then the interrupted note.
  expect(texts).toEqual([['I am sorry about your refund, … [interrupted]']]);
  expect(errors).toHaveLength(1);
  expect(answers).not.toContain(200);
});

describe.each(sources)('ctx.reply(%s) closed early', (_name, open) => {
  it('ends the reply interrupted and fails the delivery when the stream ends before its finish', async () => {
    const { texts, errors, answers } = await run(
      await botWithModel(),
      { chunks: words, closeAfter: 6 },
      open,
    );

    expect(texts).toEqual([['I am sorry about your refund, … [interrupted]']]);
    expect(errors).toHaveLength(1);
    expect(answers).not.toContain(200);
  });
});
