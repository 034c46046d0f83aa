import { createFakeModelServer } from 'agent-messaging/testing';
import { describe, expect, it, onTestFinished } from 'vitest';

async function started(options?: Parameters<typeof createFakeModelServer>[0]) {
  const model = await createFakeModelServer(options);
  onTestFinished(() => model.close());
  return model;
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('createFakeModelServer', () => {
  it('answers on 127.0.0.1, queued turns first, then its reply, and logs each body', async () => {
    const model = await started({ reply: { text: 'default' } });
    model.push({ chunks: ['a', 'b'] });
    expect(model.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const first = await (
      await post(`${model.openaiBaseUrl}/chat/completions`, { model: 'm', stream: true, messages: [] })
    ).text();
    const second = await (
      await post(`${model.openaiBaseUrl}/chat/completions`, { model: 'm', stream: true, messages: [] })
    ).text();
    const contents = (sse: string) =>
      sse
        .split('\n\n')
        .filter((frame) => frame.startsWith('data: {'))
        .map((frame) => JSON.parse(frame.slice(6)).choices[0].delta.content)
        .filter(Boolean);
    expect(contents(first)).toEqual(['a', 'b']);
    expect(contents(second)).toEqual(['default']);
    expect(first.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(model.requests).toEqual([
      { api: 'chat', body: { model: 'm', stream: true, messages: [] } },
      { api: 'chat', body: { model: 'm', stream: true, messages: [] } },
    ]);
  });

  it('says the last user text back by default, on each API', async () => {
    const model = await started();
    const messages = [{ role: 'user', content: 'ping' }];
    const anthropic = await (
      await post(`${model.url}/v1/messages`, { model: 'c', stream: true, messages })
    ).text();
    expect(anthropic).toContain('"text":"said: "');
    expect(anthropic).toContain('"text":"ping"');
    const responses = await (
      await post(`${model.openaiBaseUrl}/responses`, { model: 'm', stream: true, input: 'pong' })
    ).text();
    expect(responses).toContain('"text":"You said: pong"');
    expect(responses).toContain('event: response.completed');
  });

  it('fails with each API own error body, and refuses what it does not serve', async () => {
    const model = await started({ fail: 401 });
    const openai = await post(`${model.openaiBaseUrl}/chat/completions`, { stream: true });
    expect(openai.status).toBe(401);
    expect(await openai.json()).toMatchObject({ error: { code: 'invalid_api_key' } });
    const anthropic = await post(`${model.url}/v1/messages`, { stream: true });
    expect(await anthropic.json()).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: 'Incorrect API key provided' },
    });
    expect((await post(`${model.url}/v1/embeddings`, {})).status).toBe(404);
    model.push({ text: 'x' });
    expect((await post(`${model.openaiBaseUrl}/chat/completions`, { stream: false })).status).toBe(400);
  });

  it('breaks the connection after cutAfter text chunks', async () => {
    const model = await started();
    model.push({ chunks: ['one ', 'two ', 'three'], cutAfter: 2 });
    const response = await post(`${model.url}/v1/messages`, { stream: true, messages: [] });
    const body = response.body?.getReader();
    let text = '';
    const decoder = new TextDecoder();
    const error = await (async () => {
      for (;;) {
        const { done, value } = (await body?.read()) ?? { done: true };
        if (done) return undefined;
        text += decoder.decode(value, { stream: true });
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(text).toContain('"text":"two "');
    expect(text).not.toContain('three');
    expect(text).not.toContain('message_stop');
  });
});
