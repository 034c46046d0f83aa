// 'interrupt': a newer message aborts the running handler; its streaming reply ends marked
// interrupted, then the newer message is handled; no two replies stream at once.
import { createBot, createMemoryStore, type MessageContext } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { createLoop, gate, routeInTurn } from './harness.js';

describe("concurrency: 'interrupt'", () => {
  it('marks every reply but the last interrupted, and never streams two replies at once', async () => {
    const loop = await createLoop({ concurrency: 'interrupt' });
    const streaming = new Set<string>();
    let mostStreaming = 0;
    const started = new Map<string, ReturnType<typeof gate>>();
    const startedGate = (text: string) => {
      const existing = started.get(text);
      if (existing) return existing;
      const made = gate();
      started.set(text, made);
      return made;
    };
    const reasons: string[] = [];
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      const last = ctx.text === 'm3';
      async function* answer() {
        streaming.add(ctx.text);
        mostStreaming = Math.max(mostStreaming, streaming.size);
        try {
          yield `Answer to ${ctx.text}`;
          startedGate(ctx.text).open();
          if (last) return;
          // A model still thinking: only an interruption ends it.
          await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
          yield ' (never sent)';
        } finally {
          streaming.delete(ctx.text);
        }
      }
      const result = await ctx.reply(answer());
      if (ctx.signal.aborted) reasons.push((ctx.signal.reason as Error).name);
      return result;
    });
    const say = (text: string) =>
      loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text }).message;
    const posted = [say('m1')];
    await startedGate('m1').opened;
    posted.push(say('m2'));
    await startedGate('m2').opened;
    posted.push(say('m3'));
    await loop.mock.idle();
    await loop.bot.idle();
    const replies = await loop.agentMessages();
    expect(replies.map((m) => m.status)).toEqual(['sent', 'sent', 'sent']);
    expect(replies.map((m) => m.fallback_text)).toEqual([
      'Answer to m1 … [interrupted]',
      'Answer to m2 … [interrupted]',
      'Answer to m3',
    ]);
    expect(replies.map((m) => m.reply_to?.message_id)).toEqual(posted.map((m) => m.id));
    expect(mostStreaming).toBe(1);
    expect(reasons).toEqual(['InterruptedError', 'InterruptedError']);
    // Interrupted deliveries are done, not failures: every delivery answered 2xx, none retried.
    const answers = loop.mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status);
    expect(answers.every((status) => status !== null && status >= 200 && status < 300)).toBe(true);
  });
});

describe("concurrency: 'interrupt' across instances", () => {
  it('interrupts a handler on another instance sharing the store, through its publish/subscribe', async () => {
    const store = createMemoryStore();
    const loop = await createLoop({ store, concurrency: 'interrupt' });
    const other = createBot({
      apiKey: loop.apiKey,
      webhookSecret: loop.secret,
      ...loop.connection,
      store,
      concurrency: 'interrupt',
    });
    const firstStreaming = gate();
    const ran: string[] = [];
    const handler = (name: string) => (ctx: MessageContext) => {
      ran.push(`${name}:${ctx.text}`);
      async function* answer() {
        yield `Answer to ${ctx.text}`;
        if (ctx.text !== 'first') return;
        firstStreaming.open();
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      }
      return ctx.reply(answer());
    };
    loop.bot.on('message.received', handler('a'));
    other.on('message.received', handler('b'));
    routeInTurn(loop, [loop.bot, other]);
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'first' });
    await firstStreaming.opened;
    // Delivered to instance b, which does not hold the conversation: it signals a through the store.
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'second' });
    await loop.mock.idle();
    await Promise.all([loop.bot.idle(), other.idle()]);
    expect(ran[0]).toBe('a:first');
    expect((await loop.agentMessages()).map((m) => m.fallback_text)).toEqual([
      'Answer to first … [interrupted]',
      'Answer to second',
    ]);
  });
});
