// messages.reply(cnv, modelStream): each real package against the fake model server, the reply
// written to the mock. What the user sees, and what went over the wire.
import { AgentClient, ModelStreamError, type ToolCallInfo } from 'agent-messaging';
import { createMockService } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
import { fakeModel, sources } from './model-clients.js';
import { HARD_TEXT } from './stream-kinds.js';

async function service() {
  const mock = createMockService();
  const seed = await mock.seed({ handle: 'model_bot' });
  const client = new AgentClient({ apiKey: seed.apiKey, baseUrl: mock.baseUrl, fetch: mock.fetch });
  const cnv = seed.conversationId;
  const messages = async () => (await client.conversations.listMessages(cnv)).messages;
  const posts = () =>
    mock.requests.filter((entry) => entry.method === 'POST' && /\/messages$/.test(entry.path));
  const appends = () => mock.requests.filter((entry) => /\/(append|complete)$/.test(entry.path));
  return { client, cnv, messages, posts, appends };
}

describe.each(sources)('messages.reply(cnv, %s)', (_name, open) => {
  it('writes the exact text over one Streamable HTTP request', async () => {
    const clients = await fakeModel();
    const { client, cnv, messages, posts, appends } = await service();
    clients.model.push({ text: HARD_TEXT, chunkSize: 1 });

    const result = await client.messages.reply(cnv, await open(clients), { transport: 'stream' });

    expect(result).toMatchObject({ status: 'sent', text: HARD_TEXT, outcome: 'complete' });
    expect((await messages()).map((m) => m.parts?.map((part) => part.text))).toEqual([[HARD_TEXT]]);
    expect(posts().map((entry) => [entry.query.stream, entry.headers['content-type']])).toEqual([
      ['true', 'application/x-ndjson'],
    ]);
    expect(appends()).toEqual([]);
  });

  it('ends a reply the output limit cut short with a mark, as a complete message', async () => {
    const clients = await fakeModel();
    const { client, cnv, messages } = await service();
    clients.model.push({ chunks: ['Step one, ', 'then step'], stop: 'length' });

    const result = await client.messages.reply(cnv, await open(clients));

    const text = 'Step one, then step … [truncated]';
    expect(result).toMatchObject({ status: 'sent', text, outcome: 'complete' });
    expect((await messages()).map((m) => m.parts?.map((part) => part.text))).toEqual([[text]]);
  });

  it('keeps tool-call chunks out of the reply and reports the call', async () => {
    const clients = await fakeModel();
    const { client, cnv, messages } = await service();
    clients.model.push({
      text: 'Checking. ',
      toolCalls: [{ name: 'weather', arguments: { city: 'Zanzibar-ARGS' } }],
    });
    const calls: ToolCallInfo[] = [];

    await client.messages.reply(cnv, await open(clients), { onToolCall: (call) => void calls.push(call) });

    const [reply] = await messages();
    expect(reply?.parts?.map((part) => part.text)).toEqual(['Checking. ']);
    expect(JSON.stringify(await messages())).not.toContain('Zanzibar');
    expect(calls.map((call) => call.name)).toEqual(['weather']);
  });

  it('a model failing before its first token leaves no message and the error reaches the caller', async () => {
    const clients = await fakeModel();
    const { client, cnv, messages, posts } = await service();
    clients.model.push({ fail: 401 });

    const error = await (async () => client.messages.reply(cnv, await open(clients)))().catch(
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(Error);
    expect(String((error as Error).message)).toMatch(/Incorrect API key|401/);
    expect(await messages()).toEqual([]);
    expect(posts()).toEqual([]);
  });

  it('a model failing halfway leaves the text it gave, marked as interrupted, and rethrows', async () => {
    const clients = await fakeModel();
    const { client, cnv, messages } = await service();
    clients.model.push({ chunks: ['The capital ', 'of Australia ', 'is Can', 'berra.'], cutAfter: 3 });

    const error = await (async () => client.messages.reply(cnv, await open(clients)))().catch(
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(Error);
    const [reply, ...others] = await messages();
    expect(others).toEqual([]);
    expect(reply).toMatchObject({
      status: 'sent',
      parts: [{ text: 'The capital of Australia is Can … [interrupted]' }],
    });
  });
});

describe('messages.reply refuses what is not a source of text', () => {
  it('names chunks, before anything is sent', async () => {
    const { client, cnv, posts } = await service();
    await expect(client.messages.reply(cnv, 42 as never)).rejects.toMatchObject({
      name: 'ValidationError',
      field: 'chunks',
      message: expect.stringContaining('an OpenAI chat-completions or Responses stream'),
    });
    await expect(client.messages.reply(cnv, [{ not: 'text' }] as never)).rejects.toBeInstanceOf(Error);
    expect(posts()).toEqual([]);
  });

  it('an AI SDK 401 is a ModelStreamError, not an empty message', async () => {
    const clients = await fakeModel();
    const { client, cnv, posts } = await service();
    clients.model.push({ fail: 401 });
    const [, open] = sources.find(([name]) => name.startsWith('ai-sdk chat')) ?? [];
    await expect(client.messages.reply(cnv, (await open?.(clients)) ?? [])).rejects.toBeInstanceOf(
      ModelStreamError,
    );
    expect(posts()).toEqual([]);
  });
});
