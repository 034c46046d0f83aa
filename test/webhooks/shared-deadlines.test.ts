// A bot keeps one timer for the ack deadlines of all its deliveries and one for the lifetimes of its
// 'concurrent' handlers, not one per delivery (webhook intake CPU, issue 17). Each delivery must still
// get its whole ackTimeoutMs and each handler its whole maxHandlerMs, counted from its own start,
// however the deliveries before it ended; and the ack timer keeps Node alive only while a delivery
// waits on it. Fake timers move both the timers and the clocks, so the deadlines are exact here.
import { type Bot, createBot, type MessageContext } from 'agent-messaging';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { messageReceivedBody, now, sign } from './fixtures.js';
import { EVENT_BODY, runScript } from './run-script.js';

const SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;

const botWith = (options: { ackTimeoutMs?: number; maxHandlerMs?: number; concurrent?: boolean }) =>
  createBot({
    apiKey: 'ams_sk_test',
    webhookSecret: SECRET,
    baseUrl: 'http://127.0.0.1:9',
    now,
    ...(options.concurrent ? { concurrency: 'concurrent' as const } : {}),
    ...(options.ackTimeoutMs === undefined ? {} : { ackTimeoutMs: options.ackTimeoutMs }),
    ...(options.maxHandlerMs === undefined ? {} : { maxHandlerMs: options.maxHandlerMs }),
  });

/** Delivers a message through bot.fetch; `status()` is its answer's status once answered. */
async function deliver(bot: Bot, eventId: string, text: string) {
  const body = messageReceivedBody(eventId, [text]);
  const headers = await sign(body, SECRET);
  let status: number | undefined;
  const answered = bot
    .fetch(new Request('http://bot.test/webhook', { method: 'POST', headers, body }))
    .then((response) => {
      status = response.status;
      return status;
    });
  return { answered, status: () => status };
}

describe('one timer for the deadlines of many deliveries', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers each delivery 409 (still running) at its own ackTimeoutMs, counted from its arrival', async () => {
    const bot = botWith({ ackTimeoutMs: 1000, concurrent: true });
    const gates: (() => void)[] = [];
    bot.on('message.received', (ctx: MessageContext) =>
      ctx.text === 'fast' ? undefined : new Promise<void>((open) => gates.push(open)),
    );
    // Answered at once: its deadline goes, and the timer armed for it is left running.
    const fast = await deliver(bot, 'evt_fast', 'fast');
    expect(await fast.answered).toBe(200);
    await vi.advanceTimersByTimeAsync(600);
    const second = await deliver(bot, 'evt_2', 'slow');
    await vi.advanceTimersByTimeAsync(300);
    const third = await deliver(bot, 'evt_3', 'slow');
    // 1,100 ms after the first: past its deadline, but the second has waited only 500 ms.
    await vi.advanceTimersByTimeAsync(200);
    expect([second.status(), third.status()]).toEqual([undefined, undefined]);
    await vi.advanceTimersByTimeAsync(499);
    expect(second.status()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(second.status()).toBe(409);
    expect(third.status()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(300);
    expect(third.status()).toBe(409);
    for (const open of gates) open();
    await bot.idle();
  });

  it("fires each 'concurrent' handler's signal at its own maxHandlerMs, never a finished one's", async () => {
    const bot = botWith({ maxHandlerMs: 1000, ackTimeoutMs: 10, concurrent: true });
    const aborted: string[] = [];
    bot.onError(() => undefined);
    bot.on('message.received', async (ctx: MessageContext) => {
      ctx.signal.addEventListener('abort', () => aborted.push(ctx.text));
      if (ctx.text === 'fast') return;
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
    });
    expect(await (await deliver(bot, 'evt_fast', 'fast')).answered).toBe(200);
    await vi.advanceTimersByTimeAsync(400);
    const first = await deliver(bot, 'evt_1', 'first');
    await vi.advanceTimersByTimeAsync(600);
    const second = await deliver(bot, 'evt_2', 'second');
    await vi.advanceTimersByTimeAsync(10);
    expect([await first.answered, await second.answered]).toEqual([409, 409]);
    await vi.advanceTimersByTimeAsync(389);
    expect(aborted).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(aborted).toEqual(['first']);
    await vi.advanceTimersByTimeAsync(599);
    expect(aborted).toEqual(['first']);
    await vi.advanceTimersByTimeAsync(1);
    expect(aborted).toEqual(['first', 'second']);
    await vi.advanceTimersByTimeAsync(5000);
    expect(aborted).toEqual(['first', 'second']);
    await bot.idle();
  });
});

// Run in a child: what keeps Node alive is only visible from outside the process.
const CHILD = `
import { createBot } from './src/index.ts';
import { signWebhook } from './src/testing/index.ts';
const [mode] = process.argv.slice(1);
const secret = 'whsec_' + Buffer.alloc(32, 3).toString('base64');
const bot = createBot({ apiKey: 'ams_sk_test', webhookSecret: secret, baseUrl: 'http://127.0.0.1:9',
  concurrency: 'concurrent', ackTimeoutMs: mode === 'hung' ? 50 : 60_000 });
// A hung handler waits on a promise nothing settles: only the ack deadline can answer it ('concurrent':
// no lane holds a timer of its own that would keep Node alive).
bot.on('message.received', () => (mode === 'hung' ? new Promise(() => {}) : undefined));
const eventId = 'evt_child';
${EVENT_BODY}const headers = await signWebhook({ id: eventId, payload: body, secret });
const response = await bot.fetch(new Request('http://bot.test/webhook', { method: 'POST', headers, body }));
console.log('answered', response.status);
`;

/** Runs the child to its exit (killed after 45 s): its output and how it ended. */
const runChild = (mode: 'hung' | 'fast') => runScript(CHILD, [mode]);

describe('the shared ack timer and the life of the process', () => {
  it('keeps Node alive until a delivery whose handler hangs is answered 409', async () => {
    const ended = await runChild('hung');
    expect(ended).toEqual({ output: 'answered 409', code: 0, signal: null });
  });

  it('lets Node exit once the delivery is answered, though its 60 s deadline is still ahead', async () => {
    const ended = await runChild('fast');
    expect(ended).toEqual({ output: 'answered 200', code: 0, signal: null });
  });
});
