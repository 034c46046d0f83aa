// bot.close(): a graceful shutdown for deploys. Nothing new starts, the message running finishes
// within the deadline, what waits here is handed back to the service's retry (and so to the next
// instance) in order, and a reply still running at the deadline ends marked, to be answered again.
import { createBot, createMemoryStore, ValidationError } from 'agent-messaging';
import { describe, expect, test } from 'vitest';
import { createLoop, gate, type Loop } from './harness.js';

const textOf = (message: { parts?: { type: string; text?: string }[] | undefined }) =>
  (message.parts ?? []).map((part) => part.text ?? '').join('');

/** The next instance: a new bot on the same store (the same code, deployed again), streaming its answer. */
function nextInstance(loop: Loop, store: ReturnType<typeof createMemoryStore>) {
  const bot = createBot({ apiKey: loop.apiKey, webhookSecret: loop.secret, ...loop.connection, store });
  bot.on('message.received', (ctx) =>
    ctx.reply(
      (async function* () {
        yield `next instance: ${ctx.text}`;
      })(),
    ),
  );
  loop.route((request) => bot.fetch(request));
  return bot;
}

const statusesOf = (loop: Loop, messageCount: number) =>
  loop.mock.deliveries.filter((d) => d.type === 'message.received').slice(-messageCount);

describe('bot.close', () => {
  test('a closed bot answers every delivery 503 shutting_down, runs nothing, and the retry reaches the next instance', async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store });
    const ran: string[] = [];
    loop.bot.on('message.received', (ctx) => {
      ran.push(ctx.text);
    });
    await loop.bot.close();

    const { message } = loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'hi' });
    await loop.mock.idle();
    expect(statusesOf(loop, 1).map((d) => d.status)).toEqual([503]);
    expect(ran).toEqual([]);

    const next = nextInstance(loop, store);
    await loop.mock.clock.advance(5);
    await loop.mock.idle();
    await next.idle();
    expect(statusesOf(loop, 1).map((d) => d.status)).toEqual([200]);
    const [answer] = await loop.agentMessages();
    expect(answer && textOf(answer)).toBe('next instance: hi');
    expect(message.id).toMatch(/^msg_/);
  });

  test('the running message finishes within the deadline; the one waiting behind it goes to the next instance, after it', async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store });
    const started = gate();
    const release = gate();
    loop.bot.on('message.received', async (ctx) => {
      if (ctx.text === 'first') {
        started.open();
        await release.opened;
      }
      await ctx.reply(`this instance: ${ctx.text}`);
    });
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'first' });
    await started.opened;
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'second' });
    // The second delivery reached the bot and waits for the conversation.
    await expect.poll(() => loop.mock.requests.length, { timeout: 10_000 }).toBeGreaterThan(0);

    const closing = loop.bot.close({ deadline: 60_000 });
    // The waiting delivery is handed back at once: answered 503, its message left queued.
    await expect
      .poll(() => statusesOf(loop, 2).find((d) => d.status !== null)?.status, { timeout: 10_000 })
      .toBe(503);
    release.open();
    await closing;
    await loop.mock.idle();
    // 'first' was answered by this instance; 'second' by none yet.
    const answered = loop.mock.deliveries.filter((d) => d.type === 'message.received' && d.status === 200);
    expect(answered).toHaveLength(1);
    expect((await loop.agentMessages()).map(textOf)).toEqual(['this instance: first']);

    const next = nextInstance(loop, store);
    await loop.mock.clock.advance(5);
    await loop.mock.idle();
    await next.idle();
    expect((await loop.agentMessages()).map(textOf)).toEqual([
      'this instance: first',
      'next instance: second',
    ]);
  });

  test('a reply still streaming at the deadline ends marked interrupted, and the retry answers on the next instance', async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store });
    const errors: unknown[] = [];
    loop.bot.onError((error) => errors.push(error));
    const streaming = gate();
    loop.bot.on('message.received', (ctx) =>
      ctx.reply(
        (async function* () {
          yield 'a long answer that';
          streaming.open();
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
          yield ' never ends';
        })(),
      ),
    );
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'tell me everything' });
    await streaming.opened;

    await loop.bot.close({ deadline: 1000 });
    await loop.mock.idle();
    expect(statusesOf(loop, 1).map((d) => d.status)).toEqual([503]);
    const [cut] = await loop.agentMessages();
    expect(cut?.status).toBe('sent');
    expect(cut && textOf(cut)).toMatch(/^a long answer that … \[interrupted\]$/);
    expect(errors.map((error) => (error as Error).name)).toContain('ShutdownError');

    const next = nextInstance(loop, store);
    await loop.mock.clock.advance(5);
    await loop.mock.idle();
    await next.idle();
    const texts = (await loop.agentMessages()).map(textOf);
    expect(texts).toEqual(['a long answer that … [interrupted]', 'next instance: tell me everything']);
  });

  test('close checks its deadline before anything winds down, and a second call answers the same promise', async () => {
    const loop = await createLoop();
    expect(() => loop.bot.close({ deadline: -1 })).toThrow(ValidationError);
    expect(() => loop.bot.close({ deadline: -1 })).toThrow(/deadline/);
    // Still open: a delivery runs.
    loop.bot.on('message.received', (ctx) => ctx.reply('still open'));
    await loop.post('hi');
    await loop.bot.idle();
    expect((await loop.agentMessages()).map(textOf)).toEqual(['still open']);
    const first = loop.bot.close();
    expect(loop.bot.close({ deadline: 5 })).toBe(first);
    await first;
  });
});
