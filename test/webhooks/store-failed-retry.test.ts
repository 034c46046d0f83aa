// A delivery whose handler ran but whose store failed to record it is answered 503 and its claim is
// freed (PROTOCOL.md section 6: anything but 2xx asks for another attempt), so the service's retry,
// once the store is back, runs it instead of meeting a claim still held (409 until its TTL).
import { describe, expect, it } from 'vitest';
import { createLoop, flakyStore, recordMessage, replay } from './harness.js';

describe('a store that fails after the handler ran', () => {
  it('answers 503 with retry-after, frees the claim, and the retry runs the handler again', async () => {
    const { store, inner, failing } = flakyStore();
    // 'concurrent': no conversation lock, whose release the failed store also missed (it expires).
    const loop = await createLoop({ store, concurrency: 'concurrent' });
    const delivery = await recordMessage(loop, 'hello');
    const id = delivery.headers.get('webhook-id') ?? '';
    const texts: string[] = [];
    loop.bot.on('message.received', async (ctx) => {
      texts.push(ctx.text);
      if (texts.length === 1) {
        failing.add('set');
        failing.add('settle'); // the done mark is the first write of the settle step
      }
      await ctx.reply(`Echo: ${ctx.text}`);
    });
    loop.bot.onError(() => undefined);
    const before = loop.mock.requests.length;

    const first = await loop.bot.fetch(replay(delivery));
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('5');
    expect(await first.json()).toMatchObject({ error: { code: 'store_unavailable' } });
    expect(await inner.get(`dedupe:${id}`)).toBeUndefined();

    failing.clear();
    const retry = await loop.bot.fetch(replay(delivery));
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ received: true });
    expect(texts).toEqual(['hello', 'hello']);
    expect(await inner.get(`dedupe:${id}`)).toBe('done');

    // The retry's reply has the first one's key: the service replays it, no second message.
    const sends = loop.mock.requests
      .slice(before)
      .filter((entry) => entry.method === 'POST' && entry.path.endsWith('/messages'));
    expect(sends).toHaveLength(2);
    expect(sends[1]?.headers['idempotency-key']).toBe(sends[0]?.headers['idempotency-key']);
    expect((await loop.agentMessages()).map((message) => message.fallback_text)).toEqual(['Echo: hello']);
  });

  it('a run that failed on the store stays at the head of its queue: the next holder runs it before the next message', async () => {
    const { store, failing } = flakyStore();
    // gapWaitMs 0: the next message does not wait for a failed run's retry, so only the queue keeps order.
    const loop = await createLoop({ store, lockTtlMs: 1500, gapWaitMs: 0 });
    const seen: string[] = [];
    loop.bot.on('message.received', async (ctx) => {
      seen.push(ctx.text);
      if (seen.length === 1) failing.add('acquireLock'); // the streamed reply's lease: Redis restarting
      try {
        await ctx.reply(
          (async function* () {
            yield `Echo: ${ctx.text}`;
          })(),
        );
      } finally {
        failing.clear();
      }
    });
    loop.bot.onError(() => undefined);
    await loop.post('one'); // 503: the store failed under the handler
    // The holder that failed lets its lock expire (1.5 s); 'two' then takes it and finds 'one' first.
    await loop.post('two');
    await loop.bot.idle();
    expect(seen).toEqual(['one', 'one', 'two']);
    await loop.mock.clock.advance(6); // the retry of 'one': already handled
    await loop.mock.idle();
    const answers = loop.mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status);
    expect(answers).toEqual([503, 200, 200]);
    expect((await loop.agentMessages()).map((message) => message.fallback_text)).toEqual([
      'Echo: one',
      'Echo: two',
    ]);
  });
});
