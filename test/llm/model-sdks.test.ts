// The real model packages against the fake model server, read through toTextStream: what a bot
// gets from each SDK, including a failure before the first token and one halfway.
import { ModelStreamError, type ToolCallInfo, toTextStream } from 'agent-messaging';
import { stepCountIs, streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { type Clients, fakeModel, question, sources, weather } from './model-clients.js';
import { HARD_TEXT, readAll } from './stream-kinds.js';

describe.each(sources)('%s against the fake model server', (_name, open) => {
  it('gives the exact text, one code unit per chunk', async () => {
    const clients = await fakeModel();
    clients.model.push({ text: HARD_TEXT, chunkSize: 1 });
    expect(await readAll(toTextStream(await open(clients)))).toBe(HARD_TEXT);
    expect(clients.model.requests).toHaveLength(1);
  });

  it('reports the tool call and keeps its arguments out of the text', async () => {
    const clients = await fakeModel();
    clients.model.push({
      text: 'Let me check. ',
      toolCalls: [{ name: 'weather', arguments: { city: 'Zanzibar-ARGS' } }],
    });
    const calls: ToolCallInfo[] = [];
    const text = await readAll(
      toTextStream(await open(clients), { onToolCall: (call) => void calls.push(call) }),
    );
    expect(text).toBe('Let me check. ');
    expect(calls.map((call) => call.name)).toEqual(['weather']);
  });

  it('fails before the first token on a 401, with no text', async () => {
    const clients = await fakeModel();
    clients.model.push({ fail: 401 });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const text of toTextStream(await open(clients))) seen.push(text);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([]);
    expect(error).toBeInstanceOf(Error);
    expect(String((error as Error).message)).toMatch(/Incorrect API key|401/);
    // The key never shows in what is thrown.
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain('sk-test');
  });

  it('marks a text the output limit cut short, and fails one cut before any text', async () => {
    const clients = await fakeModel();
    clients.model.push({ chunks: ['The capital ', 'of Austra'], stop: 'length' });
    expect(await readAll(toTextStream(await open(clients)))).toBe('The capital of Austra … [truncated]');
    clients.model.push({ chunks: ['Cut'], stop: 'length' });
    expect(await readAll(toTextStream(await open(clients), { truncatedNote: ' [more]' }))).toBe('Cut [more]');
    clients.model.push({ chunks: [], stop: 'length' });
    const error = await readAll(toTextStream(await open(clients))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelStreamError);
    expect((error as Error).message).toMatch(/output limit before writing any text/);
  });

  it('ends a whole answer without a mark', async () => {
    const clients = await fakeModel();
    clients.model.push({ chunks: ['Canberra.'], stop: 'done' });
    expect(await readAll(toTextStream(await open(clients)))).toBe('Canberra.');
  });

  it.each([
    ['breaks', { cutAfter: 3 }],
    ['closes cleanly before the answer ends', { closeAfter: 3 }],
  ])('fails halfway after the text that came, when the connection %s', async (_how, end) => {
    const clients = await fakeModel();
    clients.model.push({ chunks: ['The capital ', 'of Australia ', 'is Can', 'berra.'], ...end });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const text of toTextStream(await open(clients))) seen.push(text);
    })().catch((e: unknown) => e);
    expect(seen.join('')).toBe('The capital of Australia is Can');
    expect(error).toBeInstanceOf(Error);
  });
});

describe('an Anthropic MessageStream read slowly', () => {
  it('fails when the connection breaks while no read is waiting', async () => {
    const clients = await fakeModel();
    clients.model.push({ chunks: ['The capital ', 'of Australia ', 'is Can', 'berra.'], cutAfter: 3 });
    const stream = clients.anthropic.messages.stream({
      model: 'claude-test',
      max_tokens: 100,
      messages: question,
    });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const text of toTextStream(stream)) {
        seen.push(text);
        // A slow reader: no read waits while the stream fails (its iterator then ends quietly).
        if (seen.length === 1) await stream.done().catch(() => {});
      }
    })().catch((e: unknown) => e);
    expect(seen.join('')).toBe('The capital of Australia is Can');
    expect(error).toBeInstanceOf(Error);
  });
});

describe('the AI SDK with a tool, over two steps', () => {
  it.each([
    ['chat completions', (c: Clients) => c.aiSdk.chat('gpt-test')],
    ['responses', (c: Clients) => c.aiSdk('gpt-test')],
  ])('%s: runs the tool, separates the steps, and sends the tool result back', async (_name, pick) => {
    const clients = await fakeModel();
    clients.model.push(
      { text: 'Let me look.', toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }] },
      { text: 'It is sunny in Oslo.' },
    );
    const calls: ToolCallInfo[] = [];
    const result = streamText({
      model: pick(clients),
      messages: question,
      tools: { weather },
      stopWhen: stepCountIs(3),
    });
    const text = await readAll(toTextStream(result, { onToolCall: (call) => void calls.push(call) }));
    expect(text).toBe('Let me look.\n\nIt is sunny in Oslo.');
    expect(calls).toMatchObject([{ name: 'weather', source: 'ai-sdk' }]);
    expect(JSON.stringify(clients.model.requests[1]?.body)).toContain('sunny in Oslo');
  });

  it('a 401 ends the textStream empty, while toTextStream of the result throws', async () => {
    const clients = await fakeModel();
    clients.model.push({ fail: 401 }, { fail: 401 });
    const quiet = streamText({
      model: clients.aiSdk.chat('gpt-test'),
      messages: question,
      onError: () => {},
    });
    expect(await readAll(quiet.textStream)).toBe('');
    const result = streamText({
      model: clients.aiSdk.chat('gpt-test'),
      messages: question,
      onError: () => {},
    });
    await expect(readAll(toTextStream(result))).rejects.toBeInstanceOf(ModelStreamError);
  });
});

describe('an Anthropic MessageStream', () => {
  it('read after its first events arrived still gives every word', async () => {
    const clients = await fakeModel();
    clients.model.push({ chunks: ['One ', 'two ', 'three.'] });
    const stream = clients.anthropic.messages.stream({
      model: 'claude-test',
      max_tokens: 100,
      messages: question,
    });
    await stream.emitted('text'); // the first delta has arrived before toTextStream is called
    expect(await readAll(toTextStream(stream))).toBe('One two three.');
  });

  it('that already ended is refused, and one that failed gives its error', async () => {
    const clients = await fakeModel();
    clients.model.push({ text: 'Done.' }, { fail: 401 });
    const ended = clients.anthropic.messages.stream({
      model: 'claude-test',
      max_tokens: 100,
      messages: question,
    });
    await ended.done();
    expect(() => toTextStream(ended)).toThrow(/already ended/);
    const failed = clients.anthropic.messages.stream({
      model: 'claude-test',
      max_tokens: 100,
      messages: question,
    });
    await failed.done().catch(() => {});
    await expect(readAll(toTextStream(failed))).rejects.toMatchObject({ status: 401 });
  });

  it('an openai Stream read twice is a ValidationError', async () => {
    const clients = await fakeModel();
    clients.model.push({ text: 'Once.' });
    const stream = await clients.openai.chat.completions.create({
      model: 'gpt-test',
      messages: question,
      stream: true,
    });
    await readAll(toTextStream(stream));
    expect(() => toTextStream(stream)).toThrow(/already read/);
    // Read by its owner first: the openai package's own refusal becomes the same ValidationError.
    clients.model.push({ text: 'Once.' });
    const other = await clients.openai.chat.completions.create({
      model: 'gpt-test',
      messages: question,
      stream: true,
    });
    for await (const _ of other) break;
    await expect(readAll(toTextStream(other))).rejects.toMatchObject({
      name: 'ValidationError',
      field: 'source',
    });
  });
});

describe('openai runTools with stream: true', () => {
  it('reads both completions as one text, a blank line between them, the tool announced once', async () => {
    const clients = await fakeModel();
    clients.model.push(
      { text: 'Let me check.', toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] },
      { text: 'Sunny in Oslo.' },
    );
    const runner = clients.openai.chat.completions.runTools({
      model: 'gpt-test',
      stream: true,
      messages: question,
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'The weather in a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
            function: (args: { city: string }) => `sunny in ${args.city}`,
            parse: JSON.parse,
          },
        },
      ],
    });
    const calls: ToolCallInfo[] = [];
    const text = await readAll(toTextStream(runner, { onToolCall: (call) => void calls.push(call) }));
    expect(text).toBe('Let me check.\n\nSunny in Oslo.');
    expect(calls).toEqual([{ name: 'get_weather', id: 'call_1', source: 'openai-chat' }]);
    expect(clients.model.requests[1]?.body.messages).toContainEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      content: 'sunny in Oslo',
    });
  });
});
