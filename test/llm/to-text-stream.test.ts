import { ModelStreamError, type ToolCallInfo, toTextStream, ValidationError } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { asyncOf, eventsOf, HARD_TEXT, KINDS, readAll, TOOL_ARGS } from './stream-kinds.js';

describe('toTextStream', () => {
  it.each(KINDS)('gives the exact text of a %s stream split at every code-unit boundary', async (kind) => {
    for (let at = 1; at < HARD_TEXT.length; at++) {
      const chunks = [HARD_TEXT.slice(0, at), HARD_TEXT.slice(at)];
      expect(await readAll(toTextStream(asyncOf(eventsOf(kind, chunks))))).toBe(HARD_TEXT);
    }
    // One code unit per chunk: every surrogate pair, ZWJ and combining mark cut apart.
    expect(await readAll(toTextStream(asyncOf(eventsOf(kind, [...HARD_TEXT.split('')]))))).toBe(HARD_TEXT);
  });

  it.each(KINDS.filter((kind) => kind !== 'text'))(
    'reports a %s tool call to onToolCall and never puts its arguments in the text',
    async (kind) => {
      const calls: ToolCallInfo[] = [];
      const text = await readAll(
        toTextStream(asyncOf(eventsOf(kind, ['Let me ', 'check.'], true)), {
          onToolCall: (call) => void calls.push(call),
        }),
      );
      expect(text).toBe('Let me check.');
      expect(text).not.toContain(TOOL_ARGS);
      expect(text).not.toContain('Zanzibar');
      expect(calls).toEqual([{ name: 'weather', id: 'call_1', source: kind }]);
    },
  );

  it('waits for onToolCall before reading on, so a status line goes out first', async () => {
    const order: string[] = [];
    const events = eventsOf('anthropic', ['Checking.'], true).concat([
      { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'Sunny.' } },
    ]);
    for await (const text of toTextStream(asyncOf(events), {
      onToolCall: async () => {
        await Promise.resolve();
        order.push('tool');
      },
    })) {
      order.push(text);
    }
    // Text after a tool call is a new paragraph.
    expect(order).toEqual(['Checking.', 'tool', '\n\n', 'Sunny.']);
  });

  it('reads the fullStream of an AI SDK result and puts a blank line between steps', async () => {
    const step1 = eventsOf('ai-sdk', ['Let me look.'], true).slice(0, -1);
    const step2 = eventsOf('ai-sdk', ['It is sunny.']).slice(1);
    const result = {
      // textStream would end empty on a failure: it must not be the one read.
      get textStream(): AsyncIterable<string> {
        throw new Error('textStream read');
      },
      get fullStream() {
        return asyncOf([...step1, ...step2]);
      },
    };
    expect(await readAll(toTextStream(result))).toBe('Let me look.\n\nIt is sunny.');
  });

  it('throws an AI SDK error part (a 401 before the first token) as a ModelStreamError', async () => {
    const cause = Object.assign(new Error('Incorrect API key provided'), { statusCode: 401 });
    const stream = toTextStream(
      asyncOf([{ type: 'start' }, { type: 'error', error: cause }, { type: 'finish' }]),
    );
    const error = await readAll(stream).catch((e: unknown) => e);
    expect(ModelStreamError.is(error)).toBe(true);
    expect(error).toMatchObject({
      source: 'ai-sdk',
      cause,
      message: expect.stringContaining('Incorrect API key'),
    });
  });

  it('throws after the text already given when a stream fails halfway', async () => {
    const events = [...eventsOf('openai-responses', ['The capital ', 'is Can']).slice(0, -1)];
    events.push({
      type: 'response.failed',
      response: { error: { code: 'server_error', message: 'overloaded' } },
    });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const text of toTextStream(asyncOf(events))) seen.push(text);
    })().catch((e: unknown) => e);
    expect(seen.join('')).toBe('The capital is Can');
    expect(error).toBeInstanceOf(ModelStreamError);
    expect((error as Error).message).toContain('server_error: overloaded');
  });

  it.each([
    [{ type: 'error', sequence_number: 3, code: 'rate_limit', message: 'slow down' }, 'openai-responses'],
    [{ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'anthropic'],
    [{ type: 'abort' }, 'ai-sdk'],
  ])('treats %o as a failure of the %s stream', async (event, source) => {
    const error = await readAll(toTextStream(asyncOf([event]))).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ModelStreamError', source });
  });

  it.each(KINDS.filter((kind) => kind !== 'text'))(
    'fails a %s stream that ends without the event that closes its answer, after its text',
    async (kind) => {
      const events = eventsOf(kind, ['Half ', 'an answer']).slice(0, -1);
      const seen: string[] = [];
      const error = await (async () => {
        for await (const text of toTextStream(asyncOf(events))) seen.push(text);
      })().catch((e: unknown) => e);
      expect(seen.join('')).toBe('Half an answer');
      expect(error).toMatchObject({ name: 'ModelStreamError', source: kind });
      expect((error as Error).message).toContain('the stream ended before');
    },
  );

  it('gives an Iterable<string> and a plain string as they are', async () => {
    expect(await readAll(toTextStream(['a', '', 'b']))).toBe('ab');
    expect(await readAll(toTextStream('whole'))).toBe('whole');
  });
});

describe('toTextStream refuses bad input with a ValidationError naming it', () => {
  const reject = async (run: () => Promise<unknown> | unknown) => {
    try {
      await run();
    } catch (error) {
      return error as ValidationError;
    }
    throw new Error('did not throw');
  };

  it.each([null, 42, {}, { next: () => {} }, Promise.resolve('x')])(
    'an unknown shape (%o), at once',
    async (source) => {
      const error = await reject(() => toTextStream(source as never));
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.field).toBe('source');
      expect(error.message).toContain(
        'AsyncIterable<string>, an OpenAI chat-completions or Responses stream',
      );
    },
  );

  it('a stream of objects no model gives, on the first read', async () => {
    const error = await reject(() => readAll(toTextStream(asyncOf([{ answer: 'secret user text' }]))));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toContain('yielded an object with keys answer at index 0');
    expect(error.message).not.toContain('secret user text');
  });

  it('bytes instead of text', async () => {
    const error = await reject(() => readAll(toTextStream(asyncOf([new TextEncoder().encode('hi')]))));
    expect(error.message).toContain('yielded bytes (decode them');
  });

  it("a string among a model's events, naming its index", async () => {
    const events = [...eventsOf('anthropic', ['Hi']).slice(0, 3), 'secret user text'];
    const error = await reject(() => readAll(toTextStream(asyncOf<unknown>(events))));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.field).toBe('source');
    expect(error.message).toContain('yielded a string at index 3 among anthropic events');
    expect(error.message).not.toContain('secret user text');
  });

  it('a non-string after strings, naming its index', async () => {
    const error = await reject(() => readAll(toTextStream(asyncOf<unknown>(['a', 'b', 7]))));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toContain('yielded a number at index 2 after strings');
  });

  it('a stream already read, by this function or by its owner', async () => {
    const stream = asyncOf(['a']);
    await readAll(toTextStream(stream));
    expect(await reject(() => toTextStream(stream))).toMatchObject({
      name: 'ValidationError',
      field: 'source',
    });

    const body = new ReadableStream<string>({ start: (c) => c.close() });
    body.getReader();
    const locked = await reject(() => toTextStream(body as AsyncIterable<string>));
    expect(locked.message).toContain('was already read');
  });

  it('an onToolCall that is not a function', async () => {
    const error = await reject(() => toTextStream(['a'], { onToolCall: 'log' as never }));
    expect(error.field).toBe('onToolCall');
  });

  it('a truncatedNote that is not a string', async () => {
    const error = await reject(() => toTextStream(['a'], { truncatedNote: false as never }));
    expect(error.field).toBe('truncatedNote');
  });
});

describe('toTextStream marks text a stop cut short', () => {
  const chunk = (id: string, delta: Record<string, unknown>, finish_reason: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason }],
  });

  it('only when no text followed the stop (a tool runner asks again after a cut step)', async () => {
    const events = [
      chunk('a', { content: 'First answer' }, 'length'),
      chunk('b', { content: 'Second answer.' }),
      chunk('b', {}, 'stop'),
    ];
    expect(await readAll(toTextStream(asyncOf(events)))).toBe('First answerSecond answer.');
  });

  it('as a content filter too, and an Anthropic refusal', async () => {
    const filtered = [chunk('a', { content: 'Half' }), chunk('a', {}, 'content_filter')];
    expect(await readAll(toTextStream(asyncOf(filtered)))).toBe('Half … [truncated]');
    const refused = [
      { type: 'message_start', message: { id: 'm', role: 'assistant', content: [] } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'I can' } },
      { type: 'message_delta', delta: { stop_reason: 'refusal' } },
      { type: 'message_stop' },
    ];
    expect(await readAll(toTextStream(asyncOf(refused)))).toBe('I can … [truncated]');
  });
});
