import { type BotReplyResult, idempotencyKeyFor, type MessageContext } from 'agent-messaging';
import { describe, expect, it, vi } from 'vitest';
import { createLoop, gate, type Loop, signedRequest, withFakeTimers } from './harness.js';

/** Status of the last delivery: a handler that threw (a failed expect among them) makes it 500. */
const lastStatus = (loop: Loop) => loop.mock.deliveries.at(-1)?.status;

async function* chunks(...parts: string[]) {
  for (const part of parts) yield part;
}

/** A model that fails before its first token. */
async function* failingModel(): AsyncGenerator<string> {
  yield* [];
  throw new Error('401 from the model');
}

describe('the message.received context', () => {
  it('gives the message, its text, the conversation and the webhook id', async () => {
    const loop = await createLoop();
    let seen: MessageContext | undefined;
    loop.bot.on('message.received', (ctx) => {
      seen = ctx;
    });
    const sent = await loop.post('what is the weather?');
    expect(lastStatus(loop)).toBe(200);
    expect(seen?.text).toBe('what is the weather?');
    expect(seen?.message.id).toBe(sent.id);
    expect(seen?.conversationId).toBe(loop.conversationId);
    expect(seen?.client).toBe(loop.bot.client);
    expect(seen?.webhookId).toBe(seen?.event.eventId);
  });

  it('joins several text parts with newlines, as the service joins them for fallback_text', async () => {
    const loop = await createLoop();
    let text: string | undefined;
    loop.bot.on('message.received', (ctx) => {
      text = ctx.text;
    });
    const body = JSON.stringify({
      schema: 'svc.event.v1',
      eventId: 'evt_parts',
      type: 'message.received',
      createdAt: new Date().toISOString(),
      agentId: loop.agent.id,
      conversationId: loop.conversationId,
      message: {
        id: 'msg_parts',
        conversation_id: loop.conversationId,
        sequence: 9,
        sender: { id: loop.user.id },
        parts: [
          { part_index: 0, type: 'text', text: 'first' },
          { part_index: 1, type: 'image', attachment_id: 'att_1' },
          { part_index: 2, type: 'text', text: 'second' },
        ],
        status: 'sent',
        created_at: new Date().toISOString(),
      },
    });
    expect((await loop.bot.fetch(await signedRequest(body, loop.secret))).status).toBe(200);
    expect(text).toBe('first\nsecond');
  });

  it('replies with a string as one send, to the received message, under a key derived from the webhook id', async () => {
    const loop = await createLoop();
    let webhookId = '';
    let result: BotReplyResult | undefined;
    loop.bot.on('message.received', async (ctx) => {
      webhookId = ctx.webhookId;
      result = await ctx.reply(`You said: ${ctx.text}`);
    });
    const received = await loop.post('ping');
    expect(lastStatus(loop)).toBe(200);
    const sends = loop.requests({ method: 'POST', path: /\/messages$/ });
    expect(sends).toHaveLength(1);
    expect(sends[0]?.headers['idempotency-key']).toBe(idempotencyKeyFor(webhookId, 'reply'));
    expect(JSON.parse(sends[0]?.body ?? '{}')).toMatchObject({ replyToMessageId: received.id });
    const [reply] = await loop.agentMessages();
    expect(reply?.parts?.[0]?.text).toBe('You said: ping');
    expect(reply?.reply_to?.message_id).toBe(received.id);
    expect(result).toEqual({
      message_id: reply?.id,
      status: 'sent',
      text: 'You said: ping',
      outcome: 'complete',
    });
  });

  it('streams an async iterable of text through the reply writer; history holds the exact text', async () => {
    const loop = await createLoop();
    loop.bot.on('message.received', (ctx) => ctx.reply(chunks('Stre', 'amed ', 'rep', 'ly ✓')));
    await loop.post('stream please');
    expect(lastStatus(loop)).toBe(200);
    const starts = loop.requests({ method: 'POST', path: /\/messages$/ });
    expect(starts).toHaveLength(1);
    expect(starts[0]?.query).toMatchObject({ stream: 'true' });
    const [reply] = await loop.agentMessages();
    expect(reply?.status).toBe('sent');
    expect(reply?.parts?.[0]?.text).toBe('Streamed reply ✓');
  });

  it('gives each reply of a handler its own key, so two replies are two messages', async () => {
    const loop = await createLoop();
    loop.bot.on('message.received', async (ctx) => {
      await ctx.reply('one');
      await ctx.reply('two', { replyToMessageId: null });
    });
    await loop.post('twice');
    expect(lastStatus(loop)).toBe(200);
    const keys = loop
      .requests({ method: 'POST', path: /\/messages$/ })
      .map((entry) => entry.headers['idempotency-key']);
    expect(new Set(keys).size).toBe(2);
    const replies = await loop.agentMessages();
    expect(replies.map((message) => message.parts?.[0]?.text)).toEqual(['one', 'two']);
    expect(replies[1]?.reply_to ?? undefined).toBeUndefined();
  });

  it('reacts to and marks read the received message', async () => {
    const loop = await createLoop();
    loop.bot.on('message.received', async (ctx) => {
      await ctx.react('👍');
      await ctx.markRead();
    });
    const received = await loop.post('like this');
    expect(lastStatus(loop)).toBe(200);
    const [reaction] = loop.requests({ path: /\/reactions$/ });
    expect(reaction?.path).toBe(`/v1/messages/${received.id}/reactions`);
    expect(JSON.parse(reaction?.body ?? '{}')).toEqual({ emoji: '👍', action: 'add' });
    const [read] = loop.requests({ path: /\/read$/ });
    expect(read?.path).toBe(`/v1/conversations/${loop.conversationId}/read`);
    expect(JSON.parse(read?.body ?? '{}')).toEqual({ message_id: received.id });
    const { messages } = await loop.bot.client.conversations.listMessages(loop.conversationId);
    const stored = messages.find((message) => message.id === received.id);
    expect(stored?.reactions).toEqual([{ part_index: 0, emoji: '👍', actor_id: loop.agent.id }]);
    expect(stored?.read_at).toEqual(expect.any(String));
  });
});

describe('ctx.typing()', () => {
  const typingStates = (loop: Loop) =>
    loop
      .requests({ path: /\/typing$/ })
      .map((entry) => (JSON.parse(entry.body ?? '{}') as { state: string }).state);

  it('renews the typing state while the handler works, then sends stop when it ends', async () => {
    // Fake timers run the renewals (every 8 s) at once. The delivery is answered at once, so the
    // mock's 10 s delivery timeout does not end it while the handler works.
    await withFakeTimers(async () => {
      const loop = await createLoop({ ack: 'immediately' });
      const failures: unknown[] = [];
      loop.bot.onError((error) => failures.push(error));
      const work = gate();
      loop.bot.on('message.received', async (ctx) => {
        await ctx.typing();
        await work.opened;
      });
      await loop.post('think hard');
      await vi.waitFor(() => expect(typingStates(loop)).toEqual(['start']));
      await vi.advanceTimersByTimeAsync(8000);
      expect(typingStates(loop)).toEqual(['start', 'start']);
      await vi.advanceTimersByTimeAsync(8000);
      expect(typingStates(loop)).toEqual(['start', 'start', 'start']);
      work.open();
      await loop.bot.idle();
      expect(failures).toEqual([]);
      expect(typingStates(loop)).toEqual(['start', 'start', 'start', 'stop']);
    });
  });

  it('stops once when its stop function is called, and sends no renewal after it', async () => {
    await withFakeTimers(async () => {
      const loop = await createLoop();
      let afterStop = 0;
      loop.bot.on('message.received', async (ctx) => {
        const stop = await ctx.typing();
        await stop();
        await stop();
        afterStop = typingStates(loop).length;
        await ctx.reply('done');
      });
      await loop.post('quick');
      expect(lastStatus(loop)).toBe(200);
      // Three renewal periods later, nothing more was sent.
      await vi.advanceTimersByTimeAsync(3 * 8000);
      expect(typingStates(loop)).toEqual(['start', 'stop']);
      expect(afterStop).toBe(2);
    });
  });

  it.each([
    ['fails before its first chunk', () => failingModel()],
    ['ends empty', () => chunks()],
  ])('stops the typing a streamed reply showed when its source %s (no message, 500)', async (_, source) => {
    const loop = await createLoop();
    loop.bot.onError(() => {});
    loop.bot.on('message.received', (ctx) => ctx.reply(source()));
    await loop.post('hi');
    await loop.bot.idle();
    expect(lastStatus(loop)).toBe(500);
    expect(await loop.agentMessages()).toEqual([]);
    // One start, then one stop: no renewal keeps running after the reply failed.
    expect(typingStates(loop)).toEqual(['start', 'stop']);
  });

  it('does not fail the handler when a typing call fails, and logs it', async () => {
    const warn = vi.fn();
    const loop = await createLoop({ logger: { debug: () => {}, warn } as never });
    loop.mock.faults.inject({
      method: 'POST',
      path: '/v1/conversations/*/typing',
      fault: 'status',
      status: 400,
      times: 5,
    });
    loop.bot.on('message.received', async (ctx) => {
      const stop = await ctx.typing();
      await stop();
      await ctx.reply('still answered');
    });
    await loop.post('hi');
    expect(lastStatus(loop)).toBe(200);
    expect(warn).toHaveBeenCalledWith('a typing call failed', expect.anything());
    const [reply] = await loop.agentMessages();
    expect(reply?.parts?.[0]?.text).toBe('still answered');
  });
});
