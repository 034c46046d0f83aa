// ctx.history() in a handler, against the mock: the conversation up to and with the run's messages,
// paged through the history iterator, in each format.
import {
  type AiSdkMessage,
  type Bot,
  type BotOptions,
  createBot,
  type MessageContext,
  UserClient,
} from 'agent-messaging';
import { createMockService } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';

async function world(options: Partial<BotOptions> = {}) {
  let bot: Bot | undefined;
  const mock = createMockService({ fetch: (request) => (bot as Bot).fetch(request) });
  const seed = await mock.seed({ handle: 'history_bot' });
  const connection = { baseUrl: mock.baseUrl, fetch: mock.fetch };
  bot = createBot({ apiKey: seed.apiKey, webhookSecret: seed.webhookSecret, ...connection, ...options });
  /** Posts a message without waiting for its delivery. */
  const post = (text: string) => mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text });
  const say = async (text: string) => {
    const { message } = mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text });
    await mock.idle();
    return message;
  };
  const user = new UserClient({ sessionToken: seed.sessionToken, ...connection });
  return { mock, seed, bot, say, post, user, client: bot.client };
}

/** Runs `read` in the handler of the next message 'go', and answers what it returned. */
function onGo<T>(bot: Bot, read: (ctx: MessageContext) => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    bot.on('message.received', (ctx) => {
      if (ctx.text === 'go') return read(ctx).then(resolve, reject);
    });
  });
}

const historyRequests = (mock: Awaited<ReturnType<typeof world>>['mock']) =>
  mock.requests
    .filter((entry) => entry.method === 'GET' && entry.path.endsWith('/messages'))
    .map((entry) => entry.query);

describe('ctx.history', () => {
  it('gives three turns with a tombstone, a click, a cut reply and a file, in each format', async () => {
    const { mock, seed, bot, say, user, client } = await world();
    const cnv = seed.conversationId;
    await say("What's the weather in Oslo? 🇳🇴");
    const offer = await client.messages.send(cnv, {
      content: [
        { type: 'text', text: 'Sunny, 21 °C. Anything else?' },
        {
          type: 'actions',
          layout: 'quick_replies',
          actions: [
            { actionId: 'tomorrow', label: 'Tomorrow too', behavior: { type: 'postback', value: 'day:+1' } },
          ],
        },
      ],
    });
    const oops = await say('oops, wrong chat');
    await user.messages.unsend(oops.id);
    mock.clickAction({
      conversation_id: cnv,
      user_id: seed.user.id,
      message_id: offer.message.id,
      action_id: 'tomorrow',
    });
    await mock.idle();
    await client.messages.send(cnv, { text: 'Tomorrow: rain, then … [interrupted]' });
    const chart = await client.attachments.upload(new TextEncoder().encode('a,b\n1,2\n'), {
      name: 'rain.csv',
      mime_type: 'text/csv',
    });
    await client.messages.send(cnv, { content: [{ type: 'file', attachmentId: chart.attachment_id }] });
    const fileUrl = ({ attachmentId }: { attachmentId: string }) =>
      attachmentId === chart.attachment_id ? chart.download_url : undefined;

    const read = onGo(bot, async (ctx) => {
      const formats = {
        openai: await ctx.history({ format: 'openai', limit: 20 }),
        aiSdk: await ctx.history({ format: 'ai-sdk', fileUrl }),
        anthropic: await ctx.history({ format: 'anthropic' }),
      };
      await ctx.reply('read');
      // The run's own reply (a retried delivery's cut one too) is never fed back to the model.
      const afterReply = await ctx.history({ format: 'openai', limit: 20 });
      return { formats, afterReply };
    });
    await say('go');
    const { formats, afterReply } = await read;

    expect(formats.openai).toEqual([
      { role: 'user', content: "What's the weather in Oslo? 🇳🇴", name: seed.user.id },
      { role: 'assistant', content: 'Sunny, 21 °C. Anything else?' },
      { role: 'user', content: 'Tomorrow too', name: seed.user.id },
      { role: 'assistant', content: 'Tomorrow: rain, then … [interrupted]' },
      { role: 'assistant', content: `[file: ${chart.attachment_id}]` },
      { role: 'user', content: 'go', name: seed.user.id },
    ]);
    expect(afterReply).toEqual(formats.openai);
    const aiSdk: AiSdkMessage[] = formats.aiSdk;
    expect(aiSdk.at(-2)).toEqual({
      role: 'assistant',
      content: [{ type: 'file', data: new URL(chart.download_url), mediaType: 'application/octet-stream' }],
    });
    expect(aiSdk.at(-1)).toEqual({ role: 'user', content: 'go' });
    expect(formats.anthropic).toEqual([
      { role: 'user', content: "What's the weather in Oslo? 🇳🇴" },
      { role: 'assistant', content: 'Sunny, 21 °C. Anything else?' },
      { role: 'user', content: 'Tomorrow too' },
      {
        role: 'assistant',
        content: `Tomorrow: rain, then … [interrupted]\n\n[file: ${chart.attachment_id}]`,
      },
      { role: 'user', content: 'go' },
    ]);
    expect(historyRequests(mock)).toEqual([
      // The runtime's own reads before a run (docs/bot.md "Order with gaps"): sequence 2 before the
      // click, 5 and 6 before 'go', are the agent's messages, not user messages still to come.
      { before_sequence: '3', limit: '1' },
      { before_sequence: '7', limit: '2' },
      { limit: '20' },
      { limit: '50' },
      { limit: '50' },
      { limit: '20' },
    ]);
  });

  it("gives only the run's message when it is the first of the conversation", async () => {
    const { seed, bot, say } = await world();
    const read = onGo(bot, (ctx) => ctx.history({ format: 'openai' }));
    await say('go');
    expect(await read).toEqual([{ role: 'user', content: 'go', name: seed.user.id }]);
  });

  it('pages backwards through the history iterator until limit messages are in hand', async () => {
    const { mock, seed, bot, say, client } = await world();
    for (let i = 1; i <= 130; i++) await client.messages.send(seed.conversationId, { text: `note ${i}` });
    const read = onGo(bot, async (ctx) => ({
      many: await ctx.history({ format: 'openai', limit: 120 }),
      few: await ctx.history({ format: 'anthropic', limit: 3 }),
      sequence: ctx.message.sequence,
    }));
    await say('go');
    const { many, few, sequence } = await read;

    // 120 messages before the run's, then the run's.
    expect(many).toHaveLength(121);
    expect(many[0]).toEqual({ role: 'assistant', content: 'note 11' });
    expect(many.at(-2)).toEqual({ role: 'assistant', content: 'note 130' });
    expect(many.at(-1)).toMatchObject({ role: 'user', content: 'go' });
    // Anthropic's first message must be the user's: the agent's notes before it are left out.
    expect(few).toEqual([{ role: 'user', content: 'go' }]);
    expect(historyRequests(mock)).toEqual([
      { limit: '100' },
      { limit: '100', before_sequence: String(sequence - 99) },
      { limit: '3' },
      { limit: '3', before_sequence: String(sequence - 2) },
    ]);
  });

  it('refuses bad options with a ValidationError naming them, before any request', async () => {
    const { mock, bot, say } = await world();
    const read = onGo(bot, async (ctx) => {
      const errors: unknown[] = [];
      for (const options of [
        { format: 'gpt' },
        { format: 'openai', limit: 0 },
        { format: 'openai', maxChars: -1 },
      ]) {
        errors.push(await ctx.history(options as never).catch((error: unknown) => error));
      }
      return errors;
    });
    await say('first');
    await say('go');
    const errors = await read;
    expect(errors.map((error) => (error as { name: string; field: string }).field)).toEqual([
      'format',
      'limit',
      'maxChars',
    ]);
    expect(errors.every((error) => (error as Error).name === 'ValidationError')).toBe(true);
    expect(historyRequests(mock)).toEqual([]);
  });
});

describe('ctx.history in a debounced run', () => {
  it('ends with every message of the batch, after what came before it', async () => {
    // Far longer than 'three' takes to arrive after 'two' took the lock, however busy the machine.
    const { mock, seed, bot, post: say } = await world({ concurrency: 'debounce', debounceMs: 1000 });
    const runs: { batch: string[]; history: unknown[] }[] = [];
    bot.on('message.received', async (ctx) => {
      runs.push({
        batch: ctx.messages.map((m) => m.parts?.[0]?.text ?? ''),
        history: await ctx.history({ format: 'openai' }),
      });
      await ctx.reply(`ok ${runs.length}`);
    });

    say('one');
    await mock.idle();
    await bot.idle();
    say('two');
    say('three');
    await mock.idle();
    await bot.idle();

    expect(runs.map((run) => run.batch)).toEqual([['one'], ['two', 'three']]);
    expect(runs[1]?.history).toEqual([
      { role: 'user', content: 'one', name: seed.user.id },
      { role: 'assistant', content: 'ok 1' },
      { role: 'user', content: 'two', name: seed.user.id },
      { role: 'user', content: 'three', name: seed.user.id },
    ]);
  });
});

describe("ctx.history under 'queue'", () => {
  it('holds the answers posted before the run started, though they came after its message', async () => {
    const { mock, seed, bot, post: say } = await world({ concurrency: 'queue' });
    const histories = new Map<string, unknown[]>();
    bot.on('message.received', async (ctx) => {
      histories.set(ctx.text, await ctx.history({ format: 'openai' }));
      await ctx.reply(`answer to ${ctx.text}`);
    });

    say('one');
    say('two');
    say('three');
    await mock.idle();
    await bot.idle();

    const user = (content: string) => ({ role: 'user', content, name: seed.user.id });
    expect(histories.get('three')).toEqual([
      user('one'),
      user('two'),
      { role: 'assistant', content: 'answer to one' },
      { role: 'assistant', content: 'answer to two' },
      user('three'),
    ]);
    // The second run sees the first answer, and not the third message, which has its own run.
    expect(histories.get('two')).toEqual([
      user('one'),
      { role: 'assistant', content: 'answer to one' },
      user('two'),
    ]);
  });
});
