import type { StreamEvent } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
// Private: unit tests of the reply writer's NDJSON body and its stream sink.
import { NdjsonBody } from '../../src/streaming/ndjson-body.js';
import { StreamSink } from '../../src/streaming/stream-sink.js';

/** An answer's events that the test hands over one at a time, as the service would echo them. */
function manualEvents() {
  const ready: IteratorResult<StreamEvent>[] = [];
  const waiting: { resolve: (result: IteratorResult<StreamEvent>) => void; reject: (e: unknown) => void }[] =
    [];
  let seq = 1;
  const settle = (result: IteratorResult<StreamEvent>) => {
    const reader = waiting.shift();
    if (reader) reader.resolve(result);
    else ready.push(result);
  };
  const events: AsyncIterator<StreamEvent> = {
    next: () => {
      const result = ready.shift();
      if (result) return Promise.resolve(result);
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    return: async () => ({ done: true, value: undefined }),
  };
  const base = () => ({ schema: 'svc.event.v1', eventId: `evt_${++seq}`, conversationId: 'cnv_1', seq });
  return {
    events,
    echo: (blockId: string, value: string) =>
      settle({
        done: false,
        value: {
          ...base(),
          type: 'message.patch',
          messageId: 'msg_1',
          patch: { op: 'appendText', blockId, path: '/text', value },
        },
      }),
    completed: () => {
      settle({ done: false, value: { ...base(), type: 'message.completed', messageId: 'msg_1' } });
      settle({ done: true, value: undefined });
    },
    fail: (error: unknown) => waiting.shift()?.reject(error),
  };
}

/** Every line the sink wrote to the request body so far. */
async function linesOf(body: NdjsonBody): Promise<unknown[]> {
  const reader = body.stream.getReader();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** Lets every pending callback run; an append that is not held resolves within this. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

const patchLine = (value: string) => ({
  type: 'message.patch',
  patch: { op: 'appendText', blockId: 'blk_1', path: '/text', value },
});

function sinkWithWindow(window: number) {
  const body = new NdjsonBody();
  const answer = manualEvents();
  const target = { messageId: 'msg_1', blockId: 'blk_1', events: answer.events, cancel: () => {} };
  const sink = new StreamSink(target, body, window);
  return { body, answer, sink };
}

describe('the Streamable HTTP sink', () => {
  it('holds an append while more than its window is unacknowledged and lets it go when the service echoes the text', async () => {
    const { body, answer, sink } = sinkWithWindow(1024);
    const done: string[] = [];
    await sink.append('a'.repeat(600));
    const held = sink.append('b'.repeat(600)).then(() => done.push('second'));
    await settled();
    expect(done).toEqual([]);
    answer.echo('blk_1', 'a'.repeat(600));
    await held;
    expect(done).toEqual(['second']);
    answer.echo('blk_1', 'b'.repeat(600));
    const completion = sink.complete('ab');
    answer.completed();
    const appended = 'a'.repeat(600) + 'b'.repeat(600);
    expect(await completion).toEqual({ status: 'sent', revision: 2, appended });
    // Held or not, each line went out at once: the window bounds the writer, not the wire.
    expect(await linesOf(body)).toEqual([
      patchLine('a'.repeat(600)),
      patchLine('b'.repeat(600)),
      { type: 'message.completed', fallbackText: 'ab' },
    ]);
  });

  it('does not count an echo of another block as acknowledgement of its text', async () => {
    const { answer, sink } = sinkWithWindow(100);
    let released = false;
    const held = sink.append('x'.repeat(150)).then(() => {
      released = true;
    });
    answer.echo('blk_other', 'x'.repeat(150));
    await settled();
    expect(released).toBe(false);
    answer.echo('blk_1', 'x'.repeat(150));
    await held;
    expect(released).toBe(true);
  });

  it('rejects a held append with the error that broke the event stream', async () => {
    const { answer, sink } = sinkWithWindow(10);
    const held = sink.append('y'.repeat(50));
    await settled();
    const broken = new Error('connection reset');
    answer.fail(broken);
    await expect(held).rejects.toBe(broken);
    await expect(sink.append('z')).rejects.toBe(broken);
  });
});
