import { schemas } from 'agent-messaging';
import { createMockService } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
import { newKey, setupScenario, WebhookReceiver } from './helpers.js';
import { EventReader, jsonStreamingSend, useMockOverLoopback } from './stream-helpers.js';

// The wire schemas as values, from the public namespace.
const { Attachment } = schemas;

const ctx = useMockOverLoopback();

describe('the loopback server', () => {
  it('serves on 127.0.0.1 with a base URL without a trailing slash', () => {
    expect(ctx.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('builds upload and download URLs on its own origin', async () => {
    const s = await setupScenario(ctx.mock);
    const created = Attachment.parse(
      (
        await ctx.call('POST', '/v1/attachments', {
          token: s.apiKey,
          body: { name: 'a.bin', mime_type: 'application/octet-stream', size_bytes: 3 },
        })
      ).body,
    );
    expect(created.upload_url.startsWith(`${ctx.baseUrl}/_files/`)).toBe(true);
    const put = await fetch(created.upload_url, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array([1, 2, 3]),
    });
    expect(put.status).toBe(200);
    const bytes = new Uint8Array(await (await fetch(created.download_url)).arrayBuffer());
    expect([...bytes]).toEqual([1, 2, 3]);
  });

  it('close() ends open streams and stops listening', async () => {
    const receiver = new WebhookReceiver();
    const mock = createMockService({ fetch: receiver.fetch });
    const server = await mock.listen({ port: 0 });
    const s = await setupScenario(mock);
    const events = new EventReader(
      await jsonStreamingSend(server.baseUrl, s.conversationId, s.apiKey, newKey(), {
        schema: 'svc.agent-send.v1',
        content: [],
      }),
    );
    await events.waitFor(1);
    expect(mock.openStreams).toBe(1);
    await server.close();
    // The stream is over (cut: the client's read fails), the mock holds it no more, and nothing listens.
    const ended = await events.done;
    expect(ended).toBeInstanceOf(Error);
    expect(mock.openStreams).toBe(0);
    expect(mock.snapshot().conversations.flatMap((c) => c.messages.map((m) => m.status))).toEqual([
      'streaming',
    ]);
    await expect(fetch(`${server.baseUrl}/v1/agents`)).rejects.toThrow();
  });
});
