// bot.idle(): every handler run the bot started has settled, including runs answered 202 early;
// mock.idle() waits only for the delivery answers.
import type { MessageContext } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { createLoop, gate } from './harness.js';

describe('bot.idle()', () => {
  it("waits for a handler answered early with ack: 'immediately', which mock.idle() does not", async () => {
    const loop = await createLoop({ ack: 'immediately' });
    const release = gate();
    let done = false;
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      await release.opened;
      await ctx.reply('late answer');
      done = true;
    });
    await loop.post('hi'); // resolves after mock.idle()
    expect(loop.mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status)).toEqual([
      202,
    ]);
    expect(done).toBe(false);
    expect(await loop.agentMessages()).toHaveLength(0);
    const idle = loop.bot.idle();
    release.open();
    await idle;
    expect(done).toBe(true);
    expect((await loop.agentMessages()).map((m) => m.fallback_text)).toEqual(['late answer']);
  });

  it('resolves at once when nothing runs, and after a failed run too', async () => {
    const loop = await createLoop();
    await loop.bot.idle();
    loop.bot.onError(() => undefined);
    loop.bot.on('message.received', () => {
      throw new Error('boom');
    });
    await loop.post('hi');
    await loop.bot.idle();
    expect(loop.mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status)).toEqual([
      500,
    ]);
  });
});
