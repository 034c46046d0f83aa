// Per-conversation order through the mock with real signed deliveries: 'queue' answers a burst one
// at a time in order, 'debounce' answers it once, 'concurrent' runs it all at once.
import type { BotOptions, MessageContext } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { createLoop, type Loop } from './harness.js';

/** Lets other work run `turns` times, so a handler that started first may finish last. */
async function yieldTurns(turns: number) {
  for (let i = 0; i < turns; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

/** The user's texts, posted at once (the mock delivers them concurrently). */
function burst(loop: Loop, count: number) {
  return Array.from({ length: count }, (_, i) =>
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: `m${i + 1}` }),
  );
}

/** A bot whose handler replies to each message, slower for earlier ones, counting overlaps. */
async function replying(options: Partial<BotOptions>) {
  const loop = await createLoop(options);
  const stats = { running: 0, most: 0, runs: [] as string[][] };
  loop.bot.on('message.received', async (ctx: MessageContext) => {
    stats.running += 1;
    stats.most = Math.max(stats.most, stats.running);
    stats.runs.push(ctx.messages.map((m) => m.parts?.[0]?.text ?? ''));
    try {
      // Earlier messages take longer: without an order rule, their replies come last.
      await yieldTurns(20 - Number(ctx.text.slice(1)));
      await ctx.reply(`re: ${ctx.messages.map((m) => m.parts?.[0]?.text).join('+')}`);
    } finally {
      stats.running -= 1;
    }
  });
  return { loop, stats };
}

describe("concurrency: 'queue' (the default)", () => {
  it('answers ten messages sent in a burst with ten replies, in order, one handler at a time', async () => {
    const { loop, stats } = await replying({});
    const posted = burst(loop, 10);
    await loop.mock.idle();
    await loop.bot.idle();
    const replies = await loop.agentMessages();
    expect(replies.map((m) => m.fallback_text)).toEqual(posted.map((_, i) => `re: m${i + 1}`));
    expect(replies.map((m) => m.reply_to?.message_id)).toEqual(posted.map((p) => p.message.id));
    expect(stats.most).toBe(1);
    // Each message is its own run: all of the batch, never "the latest plus skipped".
    expect(stats.runs).toEqual(posted.map((_, i) => [`m${i + 1}`]));
    // Every delivery was answered 2xx once, none retried.
    const attempts = loop.mock.deliveries.filter((d) => d.type === 'message.received');
    expect(attempts).toHaveLength(10);
    expect(attempts.every((d) => d.status !== null && d.status >= 200 && d.status < 300)).toBe(true);
  });

  it('under concurrent the same burst overlaps and comes back out of order (the rule above is what orders it)', async () => {
    const { loop, stats } = await replying({ concurrency: 'concurrent' });
    burst(loop, 10);
    await loop.mock.idle();
    await loop.bot.idle();
    const replies = await loop.agentMessages();
    expect(replies).toHaveLength(10);
    expect(stats.most).toBeGreaterThan(1);
    expect(replies.map((m) => m.fallback_text)).not.toEqual(
      Array.from({ length: 10 }, (_, i) => `re: m${i + 1}`),
    );
  });
});

describe("concurrency: 'debounce'", () => {
  it('answers a burst once, with ctx.messages holding the whole batch oldest first', async () => {
    // A window far longer than the burst's five deliveries take to arrive, however busy the machine.
    const { loop, stats } = await replying({ concurrency: 'debounce', debounceMs: 1000 });
    const posted = burst(loop, 5);
    await loop.mock.idle();
    await loop.bot.idle();
    const replies = await loop.agentMessages();
    expect(stats.runs).toEqual([['m1', 'm2', 'm3', 'm4', 'm5']]);
    expect(replies.map((m) => m.fallback_text)).toEqual(['re: m1+m2+m3+m4+m5']);
    // The reply answers the newest message of the batch.
    expect(replies[0]?.reply_to?.message_id).toBe(posted.at(-1)?.message.id);
    // Every delivery of the batch was handled: none is retried.
    await loop.mock.clock.advance(10);
    await loop.mock.idle();
    expect(loop.mock.deliveries.filter((d) => d.type === 'message.received')).toHaveLength(5);
  });
});
