// Issue 11, outcome 6: the reader applies nothing it cannot trust.
import { InvalidResponseError } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
// Private: a MessageStream over a body made here (a user gets one from messages.stream).
import { MessageStream } from '../../src/streaming/message-stream.js';
import { bodyOf, sse } from './helpers.js';

const encoder = new TextEncoder();
const started = (seq = 1, id = 'msg_a') =>
  sse('message.started', { seq, message: { id, content: [{ id: 'blk_a', type: 'text', text: '' }] } });
const patch = (seq: number, value: string, messageId = 'msg_a', eventId?: string) => {
  const event = sse('message.patch', {
    seq,
    messageId,
    patch: { op: 'appendText', blockId: 'blk_a', path: '/text', value },
  });
  return eventId === undefined ? event : event.replace(`"evt_${seq}"`, `"${eventId}"`);
};
const completed = (seq: number) => sse('message.completed', { seq, messageId: 'msg_a' });

/** Reads a stream of the given events; answers the events read and the error it ended with. */
async function read(...events: string[]) {
  const { body } = bodyOf(events.map((event) => encoder.encode(event)));
  const stream = new MessageStream(body);
  const seen: string[] = [];
  try {
    for await (const event of stream) seen.push(`${event.type}:${event.seq}`);
    return { seen, error: undefined, stream };
  } catch (error) {
    return { seen, error, stream };
  }
}

describe('the stream reader', () => {
  it('drops an exact repeat of an applied patch and applies its text once', async () => {
    const { seen, error, stream } = await read(started(), patch(2, 'Hi'), patch(2, 'Hi'), completed(3));
    expect(error).toBeUndefined();
    expect(seen).toEqual(['message.started:1', 'message.patch:2', 'message.completed:3']);
    expect(await stream.finalText()).toBe('Hi');
  });

  it('drops a repeat of any of the last 64 applied events and refuses one from further back', async () => {
    // 70 patches: the ring of remembered eventIds has wrapped around.
    const patches = Array.from({ length: 70 }, (_, i) => patch(i + 2, 'a'));
    const recent = await read(started(), ...patches, patch(8, 'a'), patch(71, 'a'), completed(72));
    expect(recent.error).toBeUndefined();
    expect(recent.seen).toHaveLength(72);
    expect(await recent.stream.finalText()).toBe('a'.repeat(70));
    const old = await read(started(), ...patches, patch(7, 'a'));
    expect(InvalidResponseError.is(old.error)).toBe(true);
    expect((old.error as Error).message).toMatch(
      /\(seq 7\) repeats or reorders seq 7 \(the last applied was 71\)/,
    );
    expect(old.stream.message?.blocks[0]?.text).toBe('a'.repeat(70));
  });

  it('builds each block from its patches in order, short and long, read mid-stream and at the end', async () => {
    const twoBlocks = sse('message.started', {
      seq: 1,
      message: {
        id: 'msg_a',
        content: [
          { id: 'blk_a', type: 'text', text: 'A:' },
          { id: 'blk_b', type: 'text', text: '' },
        ],
      },
    });
    const to = (blockId: string, seq: number, value: string) =>
      sse('message.patch', {
        seq,
        messageId: 'msg_a',
        patch: { op: 'appendText', blockId, path: '/text', value },
      });
    const long = 'L'.repeat(100);
    // 300 token-sized patches to one block, then a long one, then the other block and back.
    const values = Array.from({ length: 300 }, (_, i) => `${i % 10}`);
    const events = [
      twoBlocks,
      ...values.map((value, i) => to('blk_a', i + 2, value)),
      to('blk_a', 302, long),
      to('blk_b', 303, 'b1'),
      to('blk_a', 304, 'a!'),
      to('blk_b', 305, 'b2'),
      sse('message.completed', { seq: 306, messageId: 'msg_a' }),
    ];
    const { body } = bodyOf(events.map((event) => encoder.encode(event)));
    const stream = new MessageStream(body);
    const midway: string[] = [];
    for await (const event of stream) {
      if (event.seq === 151 || event.seq === 304)
        midway.push(stream.message?.blocks.map((b) => b.text).join('|') ?? '');
    }
    const a = `A:${values.join('')}${long}a!`;
    expect(midway).toEqual([`A:${values.slice(0, 150).join('')}|`, `${a}|b1`]);
    expect((await stream.finalMessage()).blocks.map((block) => block.text)).toEqual([a, 'b1b2']);
  });

  it.each([
    [
      'a seq out of order',
      [started(), patch(3, 'b'), patch(2, 'a')],
      /message\.patch event \(seq 3\) skips from seq 1 to 3/,
    ],
    [
      'a repeated seq with another event id',
      [started(), patch(2, 'a'), patch(2, 'x', 'msg_a', 'evt_other')],
      /message\.patch event \(seq 2\) repeats or reorders seq 2/,
    ],
    [
      'a patch of another message',
      [started(), patch(2, 'a', 'msg_other')],
      /message\.patch event \(seq 2\) is of message msg_other, not msg_a/,
    ],
    [
      'a second message.started',
      [started(), patch(2, 'a'), started(3, 'msg_b')],
      /message\.started event \(seq 3\) is a second message\.started/,
    ],
    [
      'a patch before message.started',
      [patch(1, 'a')],
      /message\.patch event \(seq 1\) came before message\.started/,
    ],
    [
      'an event after message.completed',
      [started(), completed(2), patch(3, 'late')],
      /message\.patch event \(seq 3\) came after message\.completed/,
    ],
  ])(
    'refuses %s with an InvalidResponseError naming the event, applying none of it',
    async (_, events, message) => {
      const { error, stream } = await read(...events);
      expect(InvalidResponseError.is(error)).toBe(true);
      expect((error as Error).message).toMatch(message);
      // Nothing of the refused event reached the message.
      const text = stream.message?.blocks[0]?.text ?? '';
      expect(text).not.toMatch(/x|late/);
      expect(text.length).toBeLessThanOrEqual(1);
    },
  );
});
