// ctx.session through the mock: kept per conversation in the store, saved with compare-and-set so two
// concurrent handlers never lose an update; a failed run saves nothing; the TTL bounds it.
import { type BotStore, createMemoryStore, type MessageContext, SessionConflictError } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { createLoop, gate } from './harness.js';

describe('ctx.session', () => {
  it('keeps state per conversation between messages', async () => {
    const loop = await createLoop({ session: { initial: () => ({ count: 0 }) } });
    const seen: unknown[] = [];
    loop.bot.on('message.received', (ctx: MessageContext) => {
      seen.push({ ...ctx.session });
      ctx.session.count = Number(ctx.session.count) + 1;
      ctx.session.last = ctx.text;
    });
    await loop.post('one');
    await loop.post('two');
    await loop.post('three');
    expect(seen).toEqual([{ count: 0 }, { count: 1, last: 'one' }, { count: 2, last: 'two' }]);
  });

  it("loses no update when two handlers of one conversation run at once: the second save conflicts and its retry runs on the first one's state", async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store, concurrency: 'concurrent', session: {} });
    const bothLoaded = gate();
    let loaded = 0;
    const errors: unknown[] = [];
    loop.bot.onError((error) => {
      errors.push(error);
    });
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      const items = (ctx.session.items as string[] | undefined) ?? [];
      loaded += 1;
      if (loaded === 2) bothLoaded.open();
      // The first two runs both read the state before either saves.
      if (loaded <= 2) await bothLoaded.opened;
      ctx.session.items = [...items, ctx.text];
    });
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'a' });
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'b' });
    await loop.mock.idle();
    expect(errors).toHaveLength(1);
    expect(SessionConflictError.is(errors[0])).toBe(true);
    const statuses = () =>
      loop.mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status);
    expect(statuses().sort()).toEqual([200, 500]);
    // The service retries the conflicted delivery; it runs on the saved state.
    await loop.mock.clock.advance(5);
    await loop.mock.idle();
    expect(statuses().filter((s) => s === 200)).toHaveLength(2);
    const saved = JSON.parse((await store.get(`session:${loop.conversationId}`)) ?? '{}');
    expect([...saved.items].sort()).toEqual(['a', 'b']);
  });

  it('saves nothing when the handler fails', async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store, session: {} });
    loop.bot.onError(() => undefined);
    loop.bot.on('message.received', (ctx: MessageContext) => {
      ctx.session.touched = true;
      throw new Error('model down');
    });
    await loop.post('hi');
    expect(await store.get(`session:${loop.conversationId}`)).toBeUndefined();
  });

  it('expires after session.ttlMs', async () => {
    let now = 1_000_000;
    const store = createMemoryStore({ now: () => now });
    const loop = await createLoop({ store, session: { ttlMs: 60_000 } });
    const seen: unknown[] = [];
    loop.bot.on('message.received', (ctx: MessageContext) => {
      seen.push(ctx.session.n);
      ctx.session.n = 1;
    });
    await loop.post('one');
    now += 60_001;
    await loop.post('two');
    expect(seen).toEqual([undefined, undefined]);
  });

  it('is not read from the store in a bot without the session option, where ctx.session throws naming it', async () => {
    const inner = createMemoryStore();
    const read: string[] = [];
    const store: BotStore = {
      ...inner,
      get: (key) => {
        read.push(key);
        return inner.get(key);
      },
    };
    const loop = await createLoop({ store });
    const refused: unknown[] = [];
    loop.bot.on('message.received', (ctx: MessageContext) => {
      // Spreading the context skips it: only touching ctx.session itself throws.
      expect(Object.keys({ ...ctx })).not.toContain('session');
      try {
        ctx.session.n = 1;
      } catch (error) {
        refused.push(error);
      }
      return ctx.reply('ok');
    });
    await loop.post('one');
    await loop.post('two');
    const received = loop.mock.deliveries.filter((d) => d.type === 'message.received');
    expect(received.map((d) => d.status)).toEqual([200, 200]);
    expect(read.filter((key) => key.startsWith('session:'))).toEqual([]);
    expect(refused).toHaveLength(2);
    expect(refused[0]).toMatchObject({ name: 'ValidationError', field: 'session' });
    expect(await inner.get(`session:${loop.conversationId}`)).toBeUndefined();
  });

  it('refuses bad session options at createBot, naming the field', async () => {
    await expect(createLoop({ session: { ttlMs: -5 } })).rejects.toMatchObject({
      name: 'ValidationError',
      issues: [{ field: 'session.ttlMs' }],
    });
  });
});
