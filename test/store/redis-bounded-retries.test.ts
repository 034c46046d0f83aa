// Bounded retries on Redis (issue 23, item 1): the attempts of a message are counted in the store, so
// a message that fails on every instance is given up after maxAttempts runs whichever instance ran
// each; and under 'queue' a run past maxHandlerMs no longer leaves its message queued in front of the
// next one (which got 409 until its lock expired, then ran behind the same message again).
import { type Bot, type BotOptions, createBot, MessageGivenUpError } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { routedWorld } from './bot-world.js';
import { redisForFile, uniquePrefix } from './redis-server.js';

const file = redisForFile();

/** A mock whose deliveries go to the given instances in turn, each on its own Redis connection. */
async function instances(count: number, options: Partial<BotOptions> = {}) {
  let bots: Bot[] = [];
  let turn = 0;
  const w = await routedWorld((request) => (bots[turn++ % bots.length] as Bot).fetch(request));
  const prefix = uniquePrefix('bounded');
  const errors: unknown[] = [];
  bots = [];
  for (let i = 0; i < count; i++) {
    const bot = createBot({
      apiKey: w.seed.apiKey,
      webhookSecret: w.seed.webhookSecret,
      ...w.connection,
      store: await file.store(prefix),
      ...options,
    });
    bot.onError((error) => {
      errors.push(error);
    });
    bots.push(bot);
  }
  const idle = async () => {
    await w.mock.idle();
    await Promise.all(bots.map((bot) => bot.idle()));
  };
  const answers = (webhookId: string | undefined) =>
    w.mock.deliveries.filter((d) => d.event_id === webhookId).map((d) => d.status);
  const say = (text: string) =>
    w.mock.postUserMessage(w.seed.conversationId, { user_id: w.seed.user.id, text }).message;
  return { w, bots, prefix, errors, idle, answers, say };
}

describe('bounded retries on Redis', () => {
  it('gives up a message that throws on every instance after maxAttempts runs in all', async () => {
    const t = await instances(2);
    const ranOn: number[] = [];
    let id: string | undefined;
    t.bots.forEach((bot, index) => {
      bot.on('message.received', async (ctx) => {
        if (ctx.text !== 'poison') return void (await ctx.reply(`re: ${ctx.text}`));
        id = ctx.webhookId;
        ranOn.push(index);
        throw new Error('model overloaded');
      });
    });
    const poison = t.say('poison');
    await t.idle();
    for (const seconds of [5, 300, 1800]) {
      await t.w.mock.clock.advance(seconds);
      await t.idle();
    }
    // Three runs, on both instances; the third answered 200 and no fourth delivery came.
    expect(ranOn).toEqual([0, 1, 0]);
    expect(t.answers(id)).toEqual([500, 500, 200]);
    expect(await file.raw.get(`${t.prefix}k:dedupe:${id}`)).toBe('done');
    const given = t.errors.filter((error) => MessageGivenUpError.is(error));
    expect(given).toMatchObject([{ webhookId: id, messageId: poison.id, attempts: 3, reason: 'attempts' }]);
    t.say('next');
    await t.idle();
    expect(await t.w.replies()).toEqual(['re: next']);
  });

  it("under 'queue', answers the message after a run past maxHandlerMs at once, not 409", async () => {
    // The slow run waits for its signal; 'next' must be answered within its ackTimeoutMs (8 s).
    // gapWaitMs 0: 'next' does not wait for the failed run's retry (redis-order-gaps shows that wait).
    const t = await instances(1, { maxHandlerMs: 1000, gapWaitMs: 0 });
    const ids = new Map<string, string>();
    const ran: string[] = [];
    let started!: () => void;
    const slowStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    t.bots[0]?.on('message.received', async (ctx) => {
      ids.set(ctx.text, ctx.webhookId);
      ran.push(ctx.text);
      if (ctx.text !== 'slow') return void (await ctx.reply(`re: ${ctx.text}`));
      started();
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
    });
    t.say('slow');
    await slowStarted;
    t.say('next');
    await t.idle();
    expect(t.answers(ids.get('slow'))).toEqual([500]);
    expect(t.answers(ids.get('next'))).toEqual([200]);
    expect(ran).toEqual(['slow', 'next']);
    expect(await t.w.replies()).toEqual(['re: next']);
    // Nothing left in front of the conversation's next message.
    expect(await file.raw.exists(`${t.prefix}q:queue:${t.w.seed.conversationId}`)).toBe(0);
  });
});
