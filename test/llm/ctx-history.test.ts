// ctx.history() in a handler, against the mock: the conversation before the triggering message,
// paged through the history iterator, in each format.
import { type AiSdkMessage, type Bot, createBot, type MessageContext, UserClient } from 'agent-messaging';
import { createMockService } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';

async function world() {
  let bot: Bot | undefined;
  const mock = createMockService({ fetch: (request) => (bot as Bot).fetch(request) });
  const seed = await mock.seed({ handle: 'history_bot' });
  const connection = { baseUrl: mock.baseUrl, fetch: mock.fetch };
  bot = createBot({ apiKey: seed.apiKey, webhookSecret: seed.webhookSecret, ...connection });
  const say = async (text: string) => {
    const { message } = mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text });
    await mock.idle();
    return message;
  };
  const user = new UserClient({ sessionToken: seed.sessionToken, ...connection });
  return { mock, seed, bot, say, user, client: bot.client };
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
      return { formats, go: ctx.message };
    });
    await say('go');
    const { formats, go } = await read;

    expect(formats.openai).toEqual([
      { role: 'user', content: "What's the weather in Oslo? 🇳🇴", name: seed.user.id },
      { role: 'assistant', content: 'Sunny, 21 °C. Anything else?' },
      { role: 'user', content: 'Tomorrow too', name: seed.user.id },
      { role: 'assistant', content: 'Tomorrow: rain, then … [interrupted]' },
      { role: 'assistant', content: `[file: ${chart.attachment_id}]` },
    ]);
    const aiSdk: AiSdkMessage[] = formats.aiSdk;
    expect(aiSdk.at(-1)).toEqual({
      role: 'assistant',
      content: [{ type: 'file', data: new URL(chart.download_url), mediaType: 'application/octet-stream' }],
    });
    expect(formats.anthropic).toEqual([
      { role: 'user', content: "What's the weather in Oslo? 🇳🇴" },
      { role: 'assistant', content: 'Sunny, 21 °C. Anything else?' },
      { role: 'user', content: 'Tomorrow too' },
      {
        role: 'assistant',
        content: `Tomorrow: rain, then … [interrupted]\n\n[file: ${chart.attachment_id}]`,
      },
    ]);
    // Each read stops at the triggering message: its own reply, written later, is never in it.
    expect(historyRequests(mock)).toEqual([
      { limit: '20', before_sequence: String(go.sequence) },
      { limit: '50', before_sequence: String(go.sequence) },
      { limit: '50', before_sequence: String(go.sequence) },
    ]);
  });

  it('reads nothing when the triggering message is the first of the conversation', async () => {
    const { mock, bot, say } = await world();
    const read = onGo(bot, (ctx) => ctx.history({ format: 'openai' }));
    await say('go');
    expect(await read).toEqual([]);
    expect(historyRequests(mock)).toEqual([]);
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

    expect(many).toHaveLength(120);
    expect(many[0]).toEqual({ role: 'assistant', content: 'note 11' });
    expect(many.at(-1)).toEqual({ role: 'assistant', content: 'note 130' });
    // Anthropic's first message must be the user's: with only the agent's notes, nothing is left.
    expect(few).toEqual([]);
    expect(historyRequests(mock)).toEqual([
      { limit: '100', before_sequence: String(sequence) },
      { limit: '100', before_sequence: String(sequence - 100) },
      { limit: '3', before_sequence: String(sequence) },
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
  it('stops before the first message of the batch, which the handler has in ctx.messages', async () => {
    let bot: Bot | undefined;
    const mock = createMockService({ fetch: (request) => (bot as Bot).fetch(request) });
    const seed = await mock.seed({ handle: 'debounce_bot' });
    bot = createBot({
      apiKey: seed.apiKey,
      webhookSecret: seed.webhookSecret,
      baseUrl: mock.baseUrl,
      fetch: mock.fetch,
      concurrency: 'debounce',
      // Far longer than 'three' takes to arrive after 'two' took the lock, however busy the machine.
      debounceMs: 1000,
    });
    const runs: { batch: string[]; history: unknown[] }[] = [];
    bot.on('message.received', async (ctx) => {
      runs.push({
        batch: ctx.messages.map((m) => m.parts?.[0]?.text ?? ''),
        history: await ctx.history({ format: 'openai' }),
      });
      await ctx.reply(`ok ${runs.length}`);
    });
    const say = (text: string) => mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text });

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
    ]);
  });
});
