// Order with gaps across instances on one Redis (docs/bot.md, "Order with gaps"): the highest sequence
// run is kept in Redis, so a message that reaches one instance waits there for a predecessor whose
// delivery failed and whose retry reaches the other instance; a new holder reads the record.
import { type Bot, createBot } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { routedWorld } from './bot-world.js';
import { redisForFile, uniquePrefix } from './redis-server.js';

const file = redisForFile();

describe('order with gaps on Redis', () => {
  it("a message waits on one instance for a predecessor that the service's retry brings to the other", async () => {
    const bots: Bot[] = [];
    const failing = new Set<string>();
    // Deliveries alternate between the two instances; one whose text is in `failing` gets a 502.
    let turn = 0;
    const w = await routedWorld(async (request) => {
      const body = (await request.clone().json()) as { message?: { fallback_text?: string } };
      const text = body.message?.fallback_text;
      if (text !== undefined && failing.has(text)) return new Response('bad gateway', { status: 502 });
      return (bots[turn++ % bots.length] as Bot).fetch(request);
    });
    const prefix = uniquePrefix('gaps');
    const seen: string[] = [];
    for (let i = 0; i < 2; i++) {
      const bot = createBot({
        apiKey: w.seed.apiKey,
        webhookSecret: w.seed.webhookSecret,
        ...w.connection,
        store: await file.store(prefix),
        gapWaitMs: 60_000,
        ack: 'immediately',
      });
      bot.on('message.received', async (ctx) => {
        seen.push(`${ctx.text}@${i}`);
        await ctx.reply(`Echo: ${ctx.text}`);
      });
      bots.push(bot);
    }
    const idle = async () => {
      await w.mock.idle();
      await Promise.all(bots.map((bot) => bot.idle()));
    };
    const say = async (text: string) => {
      w.mock.postUserMessage(w.seed.conversationId, { user_id: w.seed.user.id, text });
      await w.mock.idle();
    };
    await say('one'); // sequence 1, to instance 0
    await idle(); // its reply: sequence 2
    expect(await file.raw.get(`${prefix}k:order:${w.seed.conversationId}`)).toBe('1');
    failing.add('two');
    await say('two'); // sequence 3: 502
    await say('three'); // sequence 4, to instance 1: waits for 3
    expect(seen).toEqual(['one@0']);
    failing.clear();
    await w.mock.clock.advance(6); // the retry of 'two' reaches instance 0
    await idle();
    // Instance 1 held the conversation and read the queue again: 'two' ran there, then 'three'.
    expect(seen).toEqual(['one@0', 'two@1', 'three@1']);
    expect(await w.replies()).toEqual(['Echo: one', 'Echo: two', 'Echo: three']);
    expect(await file.raw.get(`${prefix}k:order:${w.seed.conversationId}`)).toBe('4');
    const reads = w.mock.requests.filter(
      (entry) => entry.method === 'GET' && entry.query.before_sequence !== undefined,
    );
    expect(reads.map((entry) => [entry.query.before_sequence, entry.query.limit])).toEqual([['4', '2']]);
  });
});
