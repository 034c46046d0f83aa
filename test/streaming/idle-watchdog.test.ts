import { TimeoutError } from 'agent-messaging';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
// Private: a MessageStream over a body made here (a user gets one from messages.stream).
import { MessageStream } from '../../src/streaming/message-stream.js';
import { manualBody, sse } from './helpers.js';

const started = sse('message.started', {
  seq: 1,
  message: { id: 'msg_w', content: [{ id: 'blk_w', type: 'text', text: '' }] },
});

/** Tracks a promise's outcome without awaiting it. */
function watch<T>(promise: Promise<T>) {
  const outcome: { settled: boolean; error?: unknown } = { settled: false };
  promise.then(
    () => {
      outcome.settled = true;
    },
    (error: unknown) => {
      outcome.settled = true;
      outcome.error = error;
    },
  );
  return outcome;
}

describe('the idle watchdog', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('raises a TimeoutError and closes the body when nothing arrives for 60 s by default', async () => {
    const manual = manualBody();
    const iterator = new MessageStream(manual.body)[Symbol.asyncIterator]();
    const first = watch(iterator.next());
    await vi.advanceTimersByTimeAsync(59_999);
    expect(first.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(first.error).toBeInstanceOf(TimeoutError);
    expect(String(first.error)).toMatch(/sent no event for 60000 ms/);
    expect(manual.state.cancelled).toBe(true);
  });

  it('does not count keep-alive comments or junk bytes as progress (issue 11)', async () => {
    const manual = manualBody();
    const iterator = new MessageStream(manual.body, { idleTimeoutMs: 1_000 })[Symbol.asyncIterator]();
    manual.push(started);
    expect((await iterator.next()).value).toMatchObject({ type: 'message.started' });
    const next = watch(iterator.next());
    for (let beat = 0; beat < 3; beat++) {
      await vi.advanceTimersByTimeAsync(300);
      manual.push(beat === 1 ? 'junk without a line end' : ': keep-alive\n\n');
    }
    expect(next.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(next.error).toBeInstanceOf(TimeoutError);
    expect(manual.state.cancelled).toBe(true);
  });

  it('does not run while the loop body is busy between reads', async () => {
    const manual = manualBody();
    const iterator = new MessageStream(manual.body, { idleTimeoutMs: 1_000 })[Symbol.asyncIterator]();
    manual.push(started);
    await iterator.next();
    await vi.advanceTimersByTimeAsync(5_000);
    manual.push(sse('message.completed', { seq: 2, messageId: 'msg_w' }));
    manual.end();
    expect((await iterator.next()).value).toMatchObject({ type: 'message.completed' });
  });
});

describe('the idle watchdog over a long stream', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('gives a read that starts after a long busy spell the whole timeout, no less', async () => {
    const manual = manualBody();
    const iterator = new MessageStream(manual.body, { idleTimeoutMs: 1_000 })[Symbol.asyncIterator]();
    manual.push(started);
    await iterator.next();
    await vi.advanceTimersByTimeAsync(5_500);
    const next = watch(iterator.next());
    await vi.advanceTimersByTimeAsync(999);
    expect(next.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(next.error).toBeInstanceOf(TimeoutError);
    expect(manual.state.cancelled).toBe(true);
  });

  it('keeps one timer for the whole stream, however many chunks arrive, and none once it ends', async () => {
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const manual = manualBody();
    const iterator = new MessageStream(manual.body, { idleTimeoutMs: 1_000 })[Symbol.asyncIterator]();
    manual.push(started);
    await iterator.next();
    for (let seq = 2; seq < 52; seq++) {
      const next = iterator.next();
      await vi.advanceTimersByTimeAsync(10);
      manual.push(
        sse('message.patch', {
          seq,
          messageId: 'msg_w',
          patch: { op: 'appendText', blockId: 'blk_w', path: '/text', value: 'x' },
        }),
      );
      expect((await next).value).toMatchObject({ seq });
    }
    expect(setTimeoutSpy.mock.calls.length).toBeLessThanOrEqual(1);
    manual.push(sse('message.completed', { seq: 52, messageId: 'msg_w' }));
    manual.end();
    expect((await iterator.next()).value).toMatchObject({ type: 'message.completed' });
    expect((await iterator.next()).done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
