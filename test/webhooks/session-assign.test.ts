// A bot without the session option: replacing ctx.session (not only reading it) throws, since a state
// set there would never be saved and would be lost without a word. The context inherits that refusal
// from a shared prototype (7f95814), where an assignment could otherwise land on the context itself.
import { createMemoryStore, type MessageContext } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { createLoop } from './harness.js';

describe('ctx.session in a bot without the session option', () => {
  it('refuses an assignment, naming the field; the handler goes on and nothing is saved', async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store });
    const refused: unknown[] = [];
    loop.bot.on('message.received', (ctx: MessageContext) => {
      try {
        ctx.session = { n: 1 };
      } catch (error) {
        refused.push(error);
      }
      expect(Object.hasOwn(ctx, 'session')).toBe(false);
      return ctx.reply('ok');
    });
    await loop.post('one');
    const received = loop.mock.deliveries.filter((d) => d.type === 'message.received');
    expect(received.map((d) => d.status)).toEqual([200]);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ name: 'ValidationError', field: 'session' });
    expect(await store.get(`session:${loop.conversationId}`)).toBeUndefined();
    expect((await loop.agentMessages()).map((message) => message.fallback_text)).toEqual(['ok']);
  });
});
