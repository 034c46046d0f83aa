// MessageStream and toTextStream are exported by the main entry but load their machinery (the SSE
// reader, the model decoders) on first use, so that a bundler splitting by module keeps it out of
// `import { AgentClient }`'s first chunk. Made by hand before anything loaded it, each must still
// work as documented: the constructor and the checks synchronous, the events and the text whole and
// in order, `break` closing the body, bad input a ValidationError at the call. Each test imports a
// fresh copy of the SDK (vi.resetModules), so nothing is loaded before it.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { bodyOf, manualBody, sse } from './helpers.js';

const encoder = new TextEncoder();
const events = [
  sse('message.started', {
    seq: 1,
    message: { id: 'msg_a', content: [{ id: 'blk_a', type: 'text', text: '' }] },
  }),
  sse('message.patch', {
    seq: 2,
    messageId: 'msg_a',
    patch: { op: 'appendText', blockId: 'blk_a', path: '/text', value: 'Hel' },
  }),
  sse('message.patch', {
    seq: 3,
    messageId: 'msg_a',
    patch: { op: 'appendText', blockId: 'blk_a', path: '/text', value: 'lo' },
  }),
  sse('message.completed', { seq: 4, messageId: 'msg_a' }),
];

/** A fresh copy of the SDK: its lazily loaded parts not loaded yet. */
const freshSdk = () => import('agent-messaging');

beforeEach(() => {
  vi.resetModules();
});

describe('a MessageStream made by hand before any stream was read', () => {
  it('reads every event in order, builds the message and its text', async () => {
    const { MessageStream } = await freshSdk();
    const stream = new MessageStream(bodyOf(events.map((event) => encoder.encode(event))).body, {
      requestId: 'req_1',
    });
    expect(stream.requestId).toBe('req_1');
    expect(stream.message).toBeUndefined();
    const seen: string[] = [];
    for await (const event of stream) seen.push(`${event.type}:${event.seq}`);
    expect(seen).toEqual(['message.started:1', 'message.patch:2', 'message.patch:3', 'message.completed:4']);
    expect(stream.message?.blocks).toEqual([{ id: 'blk_a', type: 'text', text: 'Hello' }]);
    expect(await stream.finalText()).toBe('Hello');
  });

  it('answers finalText() without a loop', async () => {
    const { MessageStream } = await freshSdk();
    const stream = new MessageStream(bodyOf(events.map((event) => encoder.encode(event))).body);
    expect(await stream.finalText()).toBe('Hello');
  });

  it('closes the body on break after the first event', async () => {
    const { MessageStream } = await freshSdk();
    const manual = manualBody();
    const stream = new MessageStream(manual.body);
    manual.push(events[0] as string);
    for await (const event of stream) {
      expect(event.type).toBe('message.started');
      break;
    }
    expect(manual.state.cancelled).toBe(true);
  });

  it('closes the body on return() before the first next()', async () => {
    const { MessageStream } = await freshSdk();
    const manual = manualBody();
    const iterator = new MessageStream(manual.body)[Symbol.asyncIterator]();
    expect(await iterator.return?.()).toEqual({ done: true, value: undefined });
    expect(manual.state.cancelled).toBe(true);
  });

  it('can be read once: a second iteration throws at once', async () => {
    const { MessageStream, AgentMessagingError } = await freshSdk();
    const stream = new MessageStream(manualBody().body);
    stream[Symbol.asyncIterator]();
    expect(() => stream[Symbol.asyncIterator]()).toThrow(AgentMessagingError);
  });
});

describe('toTextStream called before any reply', () => {
  it('checks its input at the call, synchronously', async () => {
    const { toTextStream, ValidationError } = await freshSdk();
    expect(() => toTextStream(42 as never)).toThrow(ValidationError);
    expect(() => toTextStream(['a'], { onToolCall: 'no' as never })).toThrow(ValidationError);
  });

  it('turns a model stream into its text, tool calls to onToolCall', async () => {
    const { toTextStream } = await freshSdk();
    async function* chat() {
      yield { object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hi' } }] };
      yield {
        object: 'chat.completion.chunk',
        choices: [
          { index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', function: { name: 'look' } }] } },
        ],
      };
      yield { object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: ' there' } }] };
    }
    const calls: string[] = [];
    const texts: string[] = [];
    for await (const text of toTextStream(chat(), { onToolCall: (call) => void calls.push(call.name) })) {
      texts.push(text);
    }
    expect(calls).toEqual(['look']);
    expect(texts.join('')).toBe('Hi\n\n there');
  });
});
