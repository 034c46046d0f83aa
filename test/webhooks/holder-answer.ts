// The scenario of the holder's own answer, on any store (holder-answer.test.ts, and on Redis in
// test/store/redis-holder-answer.test.ts): m1 runs, m2 and m3 are queued behind it; m1's delivery is
// answered 200 once m1 is done while m2 still runs, the three are handled once each in order, and the
// drain that goes on is counted by bot.idle() and handed to the `waitUntil` option.
import type { BotStore, MessageContext } from 'agent-messaging';
import { expect } from 'vitest';
import { createLoop, gate, type Loop, recordMessage, replay } from './harness.js';

/** Yields turns until `ready()` holds (the deliveries' admits are a few microtasks and turns away). */
async function until(ready: () => Promise<boolean>) {
  for (let turn = 0; turn < 5000; turn += 1) {
    if (await ready()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('never ready');
}

/** Runs the scenario on `store`, whose queue holds m1, m2 and m3 while m1 runs. */
export async function holderAnswersFirst(store: BotStore) {
  const handed: Promise<unknown>[] = [];
  // ackTimeoutMs far away: an answer here is the outcome's, never the deadline's 409.
  const loop: Loop = await createLoop({
    store,
    ackTimeoutMs: 600_000,
    waitUntil: (promise) => handed.push(promise),
  });
  const [d1, d2, d3] = [
    await recordMessage(loop, 'm1'),
    await recordMessage(loop, 'm2'),
    await recordMessage(loop, 'm3'),
  ];
  handed.length = 0;
  const events: string[] = [];
  const m1Started = gate();
  const m1Release = gate();
  const m2Started = gate();
  const m2Release = gate();
  loop.bot.on('message.received', async (ctx: MessageContext) => {
    events.push(`start ${ctx.text}`);
    if (ctx.text === 'm1') {
      m1Started.open();
      await m1Release.opened;
    }
    if (ctx.text === 'm2') {
      m2Started.open();
      await m2Release.opened;
    }
    await ctx.reply(`re: ${ctx.text}`);
    events.push(`done ${ctx.text}`);
  });

  const first = loop.bot.fetch(replay(d1));
  await m1Started.opened;
  const second = loop.bot.fetch(replay(d2));
  const third = loop.bot.fetch(replay(d3));
  // m2 and m3 wait in the conversation's queue behind m1.
  const queue = `queue:${loop.conversationId}`;
  await until(async () => (await store.readQueued(queue)).length === 3);
  let idle = false;
  const idled = loop.bot.idle().then(() => {
    idle = true;
    events.push('idle');
  });
  m1Release.open();

  // Answered while m2's handler cannot end (its gate is shut): before, this waited for m3.
  const answer = await first;
  expect(answer.status).toBe(200);
  expect(await answer.json()).toEqual({ received: true });
  // The drain goes on after the answer: m2 runs, gated, m3 waits behind it.
  await m2Started.opened;
  expect(events).toEqual(['start m1', 'done m1', 'start m2']);
  expect(idle).toBe(false);
  // m1's answer handed the drain that goes on to waitUntil; m2 and m3 are not answered yet.
  expect(handed).toHaveLength(1);
  const drain = handed[0]!.then(() => events.push('drained'));

  m2Release.open();
  const [two, three] = await Promise.all([second, third]);
  expect([two.status, three.status]).toEqual([200, 200]);
  await Promise.all([drain, idled]);
  // Each handled once, in order; the drain handed over and bot.idle() settle only after m3.
  expect(events.slice(0, 6)).toEqual(['start m1', 'done m1', 'start m2', 'done m2', 'start m3', 'done m3']);
  expect(events.slice(6).sort()).toEqual(['drained', 'idle']);
  expect((await loop.agentMessages()).map((m) => m.fallback_text)).toEqual(['re: m1', 're: m2', 're: m3']);
  // On the wire: one reply per message, each sent once.
  expect(loop.requests({ method: 'POST', path: /\/messages$/ })).toHaveLength(3);
  expect(await store.readQueued(queue)).toEqual([]);
}
