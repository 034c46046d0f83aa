// A run whose signal fired (a newer message under 'interrupt', past maxHandlerMs) cannot post: every
// ctx.reply (text or stream) and ctx.replyWithFile it makes afterwards is refused before anything is
// sent, with a RequestAbortedError whose cause is the signal's reason (issue 23, item 3).
import { type MessageContext, RequestAbortedError } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { createLoop, gate, type Loop } from './harness.js';

const say = (loop: Loop, text: string) =>
  loop.mock.postUserMessage(loop.conversationId, { user_id: loop.user.id, text }).message;

/** Every way a handler posts, each tried after the signal fired, with what it threw. */
async function tryEveryReply(ctx: MessageContext) {
  async function* stream() {
    yield 'LATE streamed';
  }
  const attempts = [
    () => ctx.reply('LATE text'),
    () => ctx.reply(stream()),
    () =>
      ctx.replyWithFile(new Uint8Array([1, 2, 3]), {
        name: 'late.bin',
        mime_type: 'application/octet-stream',
      }),
  ];
  const errors: unknown[] = [];
  for (const attempt of attempts)
    errors.push(
      await attempt().then(
        () => undefined,
        (error: unknown) => error,
      ),
    );
  return errors;
}

describe('replies of a stopped run', () => {
  it("are refused once a newer message interrupted the run ('interrupt')", async () => {
    const loop = await createLoop({ concurrency: 'interrupt' });
    const started = gate();
    const tried = gate();
    let errors: unknown[] = [];
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      if (ctx.text === 'm2') return void (await ctx.reply('re: m2'));
      started.open();
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      errors = await tryEveryReply(ctx);
      tried.open();
    });
    say(loop, 'm1');
    await started.opened;
    const before = loop.requests().length;
    say(loop, 'm2');
    await tried.opened;
    await loop.mock.idle();
    await loop.bot.idle();
    expect(errors).toHaveLength(3);
    for (const error of errors) {
      expect(RequestAbortedError.is(error)).toBe(true);
      expect((error as Error).message).toMatch(/was refused: this run was stopped\. A newer message/);
      expect(((error as Error).cause as Error).name).toBe('InterruptedError');
    }
    // Nothing of m1's went out: no typing, no upload, no message; only m2's answer.
    const sent = loop
      .requests()
      .slice(before)
      .filter((entry) => entry.method === 'POST');
    expect(sent.map((entry) => entry.path)).toEqual([`/v1/conversations/${loop.conversationId}/messages`]);
    expect((await loop.agentMessages()).map((m) => m.fallback_text)).toEqual(['re: m2']);
  });

  it('are refused past maxHandlerMs, the cause a TimeoutError', async () => {
    const loop = await createLoop({ maxHandlerMs: 1000 });
    loop.bot.onError(() => undefined);
    let errors: unknown[] = [];
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      errors = await tryEveryReply(ctx);
    });
    const before = loop.requests({ method: 'POST' }).length;
    await loop.post('slow');
    await loop.bot.idle();
    expect(errors.map((error) => RequestAbortedError.is(error))).toEqual([true, true, true]);
    expect(errors.map((error) => ((error as Error).cause as Error).name)).toEqual([
      'TimeoutError',
      'TimeoutError',
      'TimeoutError',
    ]);
    expect(loop.requests({ method: 'POST' }).length).toBe(before);
    expect(await loop.agentMessages()).toEqual([]);
  });
});
