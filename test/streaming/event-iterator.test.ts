import {
  ConnectionError,
  InvalidResponseError,
  RequestAbortedError,
  type StreamEvent,
} from 'agent-messaging';
import { describe, expect, it } from 'vitest';
// Private: a MessageStream over a body made here (a user gets one from messages.stream).
import { MessageStream } from '../../src/streaming/message-stream.js';
// Private: a unit test of the SSE reader under MessageStream.
import { readStreamEventBatches } from '../../src/streaming/sse-reader.js';
import { bodyOf, manualBody, sse } from './helpers.js';

const started = sse('message.started', {
  seq: 1,
  message: { id: 'msg_i', content: [{ id: 'blk_i', type: 'text', text: '' }] },
});
const patch = (seq: number, value: string) =>
  sse('message.patch', {
    seq,
    messageId: 'msg_i',
    patch: { op: 'appendText', blockId: 'blk_i', path: '/text', value },
  });
const completed = (seq: number) => sse('message.completed', { seq, messageId: 'msg_i' });
const bytes = (text: string) => new TextEncoder().encode(text);

describe('handing out the events of a stream', () => {
  it('answers next() calls made without waiting in order, as an async generator would', async () => {
    const manual = manualBody();
    const iterator = new MessageStream(manual.body)[Symbol.asyncIterator]();
    const calls = [iterator.next(), iterator.next(), iterator.next(), iterator.next(), iterator.next()];
    manual.push(started + patch(2, 'a'));
    manual.push(patch(3, 'b') + completed(4));
    manual.end();
    const results = await Promise.all(calls);
    expect(results.map((result) => (result.done ? 'done' : result.value.seq))).toEqual([1, 2, 3, 4, 'done']);
  });

  it('keeps the message in step with each event handed out, not with the whole chunk', async () => {
    const stream = new MessageStream(
      bodyOf([bytes(started + patch(2, 'a') + patch(3, 'b') + completed(4))]).body,
    );
    const texts: (string | undefined)[] = [];
    for await (const _ of stream) texts.push(stream.message?.blocks[0]?.text);
    expect(texts).toEqual(['', 'a', 'ab', 'ab']);
  });

  it('rejects once with the error of the stream, then answers done', async () => {
    const iterator = new MessageStream(bodyOf([bytes(`${started}event: message.patch\ndata: {\n\n`)]).body)[
      Symbol.asyncIterator
    ]();
    await expect(iterator.next()).rejects.toThrow(InvalidResponseError);
    await expect(iterator.next()).resolves.toEqual({ value: undefined, done: true });
  });

  it('rejects with a ConnectionError when the body ends before message.completed, then answers done', async () => {
    const iterator = new MessageStream(bodyOf([bytes(started)]).body)[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ type: 'message.started' });
    await expect(iterator.next()).rejects.toThrow(ConnectionError);
    await expect(iterator.next()).resolves.toMatchObject({ done: true });
  });

  it('return() in the middle of a chunk cancels the body and ends the iteration', async () => {
    const { body, state } = bodyOf([bytes(started + patch(2, 'a') + patch(3, 'b')), bytes(completed(4))]);
    const stream = new MessageStream(body);
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    await iterator.next();
    await expect(iterator.return?.()).resolves.toEqual({ value: undefined, done: true });
    expect(state.cancelled).toBe(true);
    await expect(iterator.next()).resolves.toMatchObject({ done: true });
    expect((await stream.finalMessage()).blocks[0]?.text).toBe('a');
  });

  it('return() before the first read closes the body', async () => {
    const { body, state } = bodyOf([bytes(started + completed(2))]);
    const iterator = new MessageStream(body)[Symbol.asyncIterator]();
    await expect(iterator.return?.()).resolves.toMatchObject({ done: true });
    expect(state.cancelled).toBe(true);
    await expect(iterator.next()).resolves.toMatchObject({ done: true });
  });

  it('aborting the signal between reads cancels the body at once; the next read rejects', async () => {
    const manual = manualBody();
    const controller = new AbortController();
    const iterator = new MessageStream(manual.body, { signal: controller.signal })[Symbol.asyncIterator]();
    manual.push(started);
    await iterator.next();
    const reason = new Error('user stopped');
    controller.abort(reason);
    expect(manual.state.cancelled).toBe(true);
    const error = await iterator.next().then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(RequestAbortedError);
    expect((error as Error).cause).toBe(reason);
  });

  it('reads nothing when the signal is aborted before the first read, and cancels the body', async () => {
    const { body, state } = bodyOf([bytes(started + completed(2))]);
    const stream = new MessageStream(body, { signal: AbortSignal.abort() });
    await expect(stream.finalMessage()).rejects.toThrow(RequestAbortedError);
    expect(state.cancelled).toBe(true);
  });
});

describe('reading events in batches', () => {
  it('gives the events of one chunk as one batch, and nothing for a chunk of only a keep-alive', async () => {
    const chunks = [
      bytes(started + patch(2, 'a') + patch(3, 'b')),
      bytes(': keep-alive\n\n'),
      bytes(completed(4)),
    ];
    const batches: StreamEvent[][] = [];
    for await (const batch of readStreamEventBatches(bodyOf(chunks).body)) batches.push(batch);
    expect(batches.map((batch) => batch.map((event) => event.seq))).toEqual([[1, 2, 3], [4]]);
  });
});
