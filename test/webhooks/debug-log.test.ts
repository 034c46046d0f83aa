// AGENT_MESSAGING_DEBUG turns on a log line at each step of a delivery's way through its conversation
// and its dedupe, so a user can see why a message waited, ran, was retried or dropped.
import type { MessageContext } from 'agent-messaging';
import { afterEach, describe, expect, it } from 'vitest';
import { createLoop, gate, replay } from './harness.js';

afterEach(() => {
  delete process.env.AGENT_MESSAGING_DEBUG;
});

/** A bot whose logger keeps its debug lines of message.received deliveries, as `message webhookId`. */
async function loggedLoop() {
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  const loop = await createLoop({
    logger: (message, fields) => {
      if (fields.level === 'debug') lines.push({ message, fields });
    },
  });
  return { loop, lines };
}

describe('the debug log of the lanes and the dedupe', () => {
  it('says a message waited for the conversation, then ran after the one before it, and a redelivery was a duplicate', async () => {
    process.env.AGENT_MESSAGING_DEBUG = '1';
    const { loop, lines } = await loggedLoop();
    const first = gate();
    const started = gate();
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      if (ctx.text === 'm1') {
        started.open();
        await first.opened;
      }
    });
    loop.record();
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'm1' });
    loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text: 'm2' });
    await loop.mock.idle();
    const [d1, d2] = loop.recorded;
    const id1 = d1!.headers.get('webhook-id');
    const id2 = d2!.headers.get('webhook-id');
    const answered = [loop.bot.fetch(replay(d1!))];
    await started.opened;
    answered.push(loop.bot.fetch(replay(d2!)));
    // m2 waits while m1 holds the conversation.
    const waited = () => lines.some((l) => l.message.startsWith('waiting') && l.fields.webhookId === id2);
    for (let turn = 0; turn < 1000 && !waited(); turn += 1) await new Promise((r) => setImmediate(r));
    first.open();
    expect((await Promise.all(answered)).map((r) => r.status)).toEqual([200, 200]);
    expect((await loop.bot.fetch(replay(d1!))).status).toBe(200);
    await loop.bot.idle();

    const of = (id: string | null) =>
      lines
        .filter((l) => l.fields.webhookId === id)
        .map((l) => `${l.message}${l.fields.claim ? ` ${l.fields.claim}` : ''}`);
    expect(of(id1)).toEqual(['claimed and queued', 'run started', 'run ended', 'duplicate done']);
    expect(of(id2)).toEqual([
      'claimed and queued',
      'waiting: the conversation is held',
      'run started',
      'run ended',
    ]);
    expect(lines.find((l) => l.message === 'run ended' && l.fields.webhookId === id1)?.fields.outcome).toBe(
      'ok',
    );
    expect(lines.filter((l) => l.message === 'queue empty: lock released')).not.toHaveLength(0);
  });

  it('writes nothing when AGENT_MESSAGING_DEBUG is not set', async () => {
    const { loop, lines } = await loggedLoop();
    loop.bot.on('message.received', () => undefined);
    await loop.post('hi');
    await loop.bot.idle();
    expect(lines).toEqual([]);
  });
});
