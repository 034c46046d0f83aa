import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
// Private: a unit test of the reply writer's coalescing buffer.
import { WriteBuffer } from '../../src/streaming/write-buffer.js';

/** A sender whose sends stay pending until the test settles them. */
function manualSender() {
  const batches: string[] = [];
  const pending: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  const send = (batch: string) =>
    new Promise<void>((resolve, reject) => {
      batches.push(batch);
      pending.push({ resolve, reject });
    });
  return { batches, pending, send };
}

const settled = async <T>(promise: Promise<T>) => {
  let done = false;
  promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await vi.advanceTimersByTimeAsync(0);
  return done;
};

describe('the write buffer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends the first write at once, then one batch once the character threshold is reached, not one per write', async () => {
    const sender = manualSender();
    const buffer = new WriteBuffer(sender.send, { chars: 10, ms: 100 });
    await buffer.write('first');
    expect(sender.batches).toEqual(['first']);
    sender.pending[0]!.resolve();
    for (const piece of ['abc', 'def', 'ghi']) await buffer.write(piece);
    expect(sender.batches).toEqual(['first']);
    await buffer.write('jk');
    expect(sender.batches).toEqual(['first', 'abcdefghijk']);
  });

  it('sends what waits once the interval has passed since the oldest waiting character', async () => {
    const sender = manualSender();
    const buffer = new WriteBuffer(sender.send, { chars: 256, ms: 100 });
    await buffer.write('first');
    sender.pending[0]!.resolve();
    await buffer.write('hi');
    await vi.advanceTimersByTimeAsync(99);
    expect(sender.batches).toEqual(['first']);
    await vi.advanceTimersByTimeAsync(1);
    expect(sender.batches).toEqual(['first', 'hi']);
  });

  it('sends the first write after a pause at once (issue 17: time to first token)', async () => {
    const sender = manualSender();
    const buffer = new WriteBuffer(sender.send, { chars: 256, ms: 100 });
    await buffer.write('Hello');
    sender.pending[0]!.resolve();
    await vi.advanceTimersByTimeAsync(100);
    await buffer.write(' again');
    expect(sender.batches).toEqual(['Hello', ' again']);
  });

  it('counts a pause from the last write: after the timer sent the tail, a write 100 ms after the one before goes at once', async () => {
    const sender = manualSender();
    const buffer = new WriteBuffer(sender.send, { chars: 256, ms: 100 });
    await buffer.write('a');
    sender.pending[0]!.resolve();
    await vi.advanceTimersByTimeAsync(10);
    await buffer.write('b');
    await vi.advanceTimersByTimeAsync(100);
    expect(sender.batches).toEqual(['a', 'b']);
    sender.pending[1]!.resolve();
    // 40 ms after the timer's send, 110 ms after the last write: a pause.
    await vi.advanceTimersByTimeAsync(40);
    await buffer.write('c');
    expect(sender.batches).toEqual(['a', 'b', 'c']);
    // Right after it, writes coalesce again.
    sender.pending[2]!.resolve();
    await buffer.write('d');
    await vi.advanceTimersByTimeAsync(99);
    expect(sender.batches).toEqual(['a', 'b', 'c']);
  });

  it('sends the first write after a pause as soon as a slow send in flight ends, not at the timer', async () => {
    const sender = manualSender();
    const buffer = new WriteBuffer(sender.send, { chars: 256, ms: 100 });
    await buffer.write('slow');
    await vi.advanceTimersByTimeAsync(150);
    await buffer.write('after a pause');
    expect(sender.batches).toEqual(['slow']);
    sender.pending[0]!.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(sender.batches).toEqual(['slow', 'after a pause']);
  });

  it('keeps batches in order and never overlaps two sends', async () => {
    const sender = manualSender();
    const buffer = new WriteBuffer(sender.send, { chars: 4, ms: 100 });
    await buffer.write('1234');
    await buffer.write('5678');
    expect(sender.batches).toEqual(['1234']);
    sender.pending[0]!.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(sender.batches).toEqual(['1234', '5678']);
  });

  it('makes write() wait while four batches of text wait behind a slow send', async () => {
    const sender = manualSender();
    const buffer = new WriteBuffer(sender.send, { chars: 10, ms: 100 });
    await buffer.write('x'.repeat(10));
    for (let i = 0; i < 4; i++) await buffer.write('y'.repeat(10));
    const blocked = buffer.write('z');
    expect(await settled(blocked)).toBe(false);
    expect(sender.batches).toEqual(['x'.repeat(10)]);
    sender.pending[0]!.resolve();
    expect(await settled(blocked)).toBe(true);
    expect(sender.batches[1]).toBe('y'.repeat(40));
  });

  it('flush() sends the rest and resolves once it was sent', async () => {
    const sender = manualSender();
    const buffer = new WriteBuffer(sender.send, { chars: 256, ms: 100 });
    await buffer.write('tail');
    const flushed = buffer.flush();
    await vi.advanceTimersByTimeAsync(0);
    expect(sender.batches).toEqual(['tail']);
    expect(await settled(flushed)).toBe(false);
    sender.pending[0]!.resolve();
    expect(await settled(flushed)).toBe(true);
  });

  it('fails every later write and flush with the error of a failed send', async () => {
    const sender = manualSender();
    const buffer = new WriteBuffer(sender.send, { chars: 2, ms: 100 });
    await buffer.write('ab');
    const failure = new Error('gone');
    sender.pending[0]!.reject(failure);
    await vi.advanceTimersByTimeAsync(0);
    await expect(buffer.write('c')).rejects.toBe(failure);
    await expect(buffer.flush()).rejects.toBe(failure);
  });
});
