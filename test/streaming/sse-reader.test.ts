import {
  AgentMessagingError,
  ConnectionError,
  InvalidResponseError,
  RequestAbortedError,
} from 'agent-messaging';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
// Private: a MessageStream over a body made here (a user gets one from messages.stream).
import { MessageStream } from '../../src/streaming/message-stream.js';
// Private: textOfBlocks is the stream's internal text view, checked beside the public reader.
import { textOfBlocks } from '../../src/streaming/streamed-message.js';
import { recordedBytes, recordedFinalText } from './fixtures/recorded-stream.js';
import { bodyOf, eventsOf, manualBody, splitAt, sse } from './helpers.js';

const started = (seq = 1) =>
  sse('message.started', {
    seq,
    message: { id: 'msg_t', content: [{ id: 'blk_t', type: 'text', text: '' }] },
  });
const patch = (seq: number, value: string) =>
  sse('message.patch', {
    seq,
    messageId: 'msg_t',
    patch: { op: 'appendText', blockId: 'blk_t', path: '/text', value },
  });
const completed = (seq: number) => sse('message.completed', { seq, messageId: 'msg_t' });
const bytes = (text: string) => new TextEncoder().encode(text);

describe('reading a recorded stream', () => {
  it('yields the typed events in order, skipping keep-alive comments and passing unknown types through', async () => {
    const events = await eventsOf([recordedBytes]);
    expect(events.map((event) => [event.type, event.seq])).toEqual([
      ['message.started', 1],
      ['message.patch', 2],
      ['message.patch', 3],
      ['message.reaction', 4],
      ['message.patch', 5],
      ['message.completed', 6],
    ]);
    expect(events[3]).toMatchObject({ type: 'message.reaction', emoji: '👍' });
    const values = events.flatMap((event) => (event.type === 'message.patch' ? [event.patch.value] : []));
    expect(values).toEqual(['Grüße, 世界 ', '🎉🙂 ', 'done.\r\nok']);
  });

  it('builds the final message and its text from the events', async () => {
    const stream = new MessageStream(bodyOf([recordedBytes]).body);
    const message = await stream.finalMessage();
    expect(message).toMatchObject({ id: 'msg_rec', conversationId: 'cnv_rec', completed: true, lastSeq: 6 });
    expect(message.blocks).toEqual([{ id: 'blk_rec', type: 'text', text: recordedFinalText }]);
    expect(textOfBlocks(message.blocks)).toBe(recordedFinalText);
  });

  it('gives the same events when the bytes are split at every single boundary', async () => {
    const whole = await eventsOf([recordedBytes]);
    for (let at = 1; at < recordedBytes.length; at++) {
      expect(await eventsOf(splitAt(recordedBytes, [at])), `split at byte ${at}`).toEqual(whole);
    }
  });

  it('gives the same events when every byte arrives alone, cutting through UTF-8 characters and CRLF', async () => {
    const whole = await eventsOf([recordedBytes]);
    const single = Array.from(recordedBytes, (_, at) => recordedBytes.subarray(at, at + 1));
    expect(await eventsOf(single)).toEqual(whole);
  });

  it('gives the same events for any random split of the bytes', async () => {
    const whole = await eventsOf([recordedBytes]);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: recordedBytes.length - 1 }), { maxLength: 40 }),
        async (cuts) => {
          expect(await eventsOf(splitAt(recordedBytes, cuts))).toEqual(whole);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('consuming a stream', () => {
  it('can be iterated once; a second loop throws an error that says so', async () => {
    const stream = new MessageStream(bodyOf([bytes(started() + completed(2))]).body);
    for await (const _ of stream);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(/iterated once/);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(AgentMessagingError);
  });

  it('finalText() after a full loop answers from what the loop read', async () => {
    const stream = new MessageStream(
      bodyOf([bytes(started() + patch(2, 'ab') + patch(3, 'c') + completed(4))]).body,
    );
    const seen: string[] = [];
    for await (const event of stream) seen.push(event.type);
    expect(seen).toHaveLength(4);
    expect(await stream.finalText()).toBe('abc');
  });

  it('break cancels the body, and finalMessage() then reports the message as not completed', async () => {
    const { body, state } = bodyOf([bytes(started()), bytes(patch(2, 'partial')), bytes(completed(3))]);
    const stream = new MessageStream(body);
    for await (const event of stream) {
      if (event.type === 'message.patch') break;
    }
    expect(state.cancelled).toBe(true);
    const message = await stream.finalMessage();
    expect(message.completed).toBe(false);
    expect(message.blocks[0]?.text).toBe('partial');
  });

  it('aborting the signal while a read is pending rejects with a RequestAbortedError and cancels the body', async () => {
    const manual = manualBody();
    const controller = new AbortController();
    const iterator = new MessageStream(manual.body, { signal: controller.signal })[Symbol.asyncIterator]();
    manual.push(started());
    await iterator.next();
    const pending = iterator.next();
    const reason = new Error('user stopped');
    controller.abort(reason);
    const error = await pending.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(RequestAbortedError);
    expect((error as Error).cause).toBe(reason);
    expect(manual.state.cancelled).toBe(true);
  });

  it('cancel() before reading closes the body', async () => {
    const { body, state } = bodyOf([bytes(started())]);
    await new MessageStream(body).cancel();
    expect(state.cancelled).toBe(true);
  });
});

describe('a stream that goes wrong', () => {
  it('throws an InvalidResponseError for an event whose data is not JSON', async () => {
    const chunks = [bytes(started() + 'event: message.patch\ndata: {"seq": 2,\n\n')];
    await expect(eventsOf(chunks)).rejects.toThrow(InvalidResponseError);
    await expect(eventsOf(chunks)).rejects.toThrow(/"message.patch" event whose data is not JSON/);
  });

  it('throws an InvalidResponseError naming the field of a malformed known event', async () => {
    const bad = sse('message.patch', {
      seq: 2,
      messageId: 'msg_t',
      patch: { op: 'appendText', blockId: 'blk_t' },
    });
    await expect(eventsOf([bytes(started() + bad)])).rejects.toThrow(
      /malformed "message.patch" event: patch.path/,
    );
  });

  it('throws a ConnectionError when the stream ends before message.completed', async () => {
    await expect(eventsOf([bytes(started() + patch(2, 'x'))])).rejects.toThrow(ConnectionError);
  });

  it('throws a ConnectionError carrying the cause when the body breaks', async () => {
    const manual = manualBody();
    const iterator = new MessageStream(manual.body)[Symbol.asyncIterator]();
    manual.push(started());
    await iterator.next();
    const cause = new TypeError('terminated');
    manual.fail(cause);
    const error = await iterator.next().then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).cause).toBe(cause);
  });
});
