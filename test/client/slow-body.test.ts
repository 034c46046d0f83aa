// A 2xx answer whose body stalls after the headers: the body is part of the attempt, so the attempt
// times out after timeoutMs and a call safe to repeat (a GET, a keyed POST) is retried with the same
// Idempotency-Key, while a `never` call is not. A loopback proxy in front of the loopback mock sends
// the first answer's headers and half its body, then holds the rest; the mock logs what arrived.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentClient, RequestAbortedError, TimeoutError } from 'agent-messaging';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { type LogLine, rejectionOf, useWorld, type World } from './world.js';

// Long enough that the answered retry, through the proxy and the mock, finishes well within it on a
// loaded machine (100 ms let a retry time out too at load 13; a stalled event loop takes hundreds of
// milliseconds), short enough for the stalled attempt.
const SLOW_MS = 1000;

let proxy: Server | undefined;
afterEach(async () => {
  const open = proxy;
  proxy = undefined;
  if (!open) return;
  open.closeAllConnections();
  await new Promise((resolve) => open.close(resolve));
});

/**
 * A proxy to the mock that stalls the body of its first `stalls` answers (or, with `cut`, ends the
 * connection after half of it); a client pointed at it.
 */
async function stallingClient(world: World, stalls = 1, cut = false) {
  let stalled = 0;
  proxy = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => name !== 'host' && name !== 'content-length'),
    ) as Record<string, string>;
    const answer = await fetch(world.baseUrl + request.url, {
      method: request.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    const body = Buffer.from(await answer.arrayBuffer());
    const out = Object.fromEntries(answer.headers);
    for (const name of ['content-length', 'content-encoding', 'transfer-encoding']) delete out[name];
    response.writeHead(answer.status, out);
    if (stalled < stalls) {
      stalled += 1;
      // Half the body, then nothing: the headers arrived in time, the answer never completes.
      response.write(body.subarray(0, body.length >> 1), () => {
        if (cut) response.socket?.destroy();
      });
      return;
    }
    response.end(body);
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  const { port } = proxy.address() as AddressInfo;
  const lines: LogLine[] = [];
  const client = new AgentClient({
    apiKey: world.apiKey,
    baseUrl: `http://127.0.0.1:${port}`,
    logger: (message, fields) => lines.push({ message, fields }),
  });
  return {
    client,
    lines,
    retries: () => lines.filter((line) => line.message === 'agent-messaging retry'),
  };
}

describe('a 2xx body that stalls', () => {
  const w = useWorld('loopback');

  test('on a GET is retried after timeoutMs, and the retry answers', async () => {
    const { client, retries } = await stallingClient(w);

    const { conversation } = await client.conversations.retrieve(w.conversationId, { timeoutMs: SLOW_MS });

    expect(conversation.id).toBe(w.conversationId);
    expect(w.requests().map((entry) => entry.method)).toEqual(['GET', 'GET']);
    expect(retries().map((line) => line.fields)).toEqual([
      expect.objectContaining({ attempt: 2, reason: 'TimeoutError' }),
    ]);
  });

  test('on a keyed POST is retried with the same Idempotency-Key, and one message exists', async () => {
    const { client } = await stallingClient(w);

    const { message } = await client.messages.send(
      w.conversationId,
      { text: 'hello' },
      { timeoutMs: SLOW_MS },
    );

    const keys = w.requests().map((entry) => entry.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[\x21-\x7e]{8,255}$/);
    expect(keys[1]).toBe(keys[0]);
    const { messages } = await w.client.conversations.listMessages(w.conversationId);
    expect(messages.filter((entry) => entry.sender.id === w.agentId).map((entry) => entry.id)).toEqual([
      message.id,
    ]);
  });

  test('cut mid-way on a GET is retried as a lost connection', async () => {
    const { client, retries } = await stallingClient(w, 1, true);

    const { conversation } = await client.conversations.retrieve(w.conversationId);

    expect(conversation.id).toBe(w.conversationId);
    expect(w.requests().map((entry) => entry.method)).toEqual(['GET', 'GET']);
    expect(retries().map((line) => line.fields)).toEqual([
      expect.objectContaining({ attempt: 2, reason: 'ConnectionError' }),
    ]);
  });

  test('cut mid-way on a keyed POST is retried with the same Idempotency-Key, and one message exists', async () => {
    const { client, retries } = await stallingClient(w, 1, true);

    const { message } = await client.messages.send(w.conversationId, { text: 'hello' });

    const keys = w.requests().map((entry) => entry.headers['idempotency-key']);
    expect(keys).toEqual([keys[0], keys[0]]);
    expect(retries().map((line) => line.fields)).toEqual([
      expect.objectContaining({ attempt: 2, reason: 'ConnectionError' }),
    ]);
    const { messages } = await w.client.conversations.listMessages(w.conversationId);
    expect(messages.filter((entry) => entry.sender.id === w.agentId).map((entry) => entry.id)).toEqual([
      message.id,
    ]);
  });

  test('logs the cut attempt as its ConnectionError, then the retry, then the answer of attempt 2', async () => {
    const { client, lines } = await stallingClient(w, 1, true);

    await client.conversations.retrieve(w.conversationId);

    expect(lines.map((line) => [line.message, line.fields.attempt, line.fields.error])).toEqual([
      ['agent-messaging request', 1, 'ConnectionError'],
      ['agent-messaging retry', 2, undefined],
      ['agent-messaging request', 2, undefined],
    ]);
    expect(lines[2]?.fields.status).toBe(200);
  });

  test("the caller's abort while the body stalls is a RequestAbortedError, never retried", async () => {
    const { client, retries } = await stallingClient(w);
    const controller = new AbortController();
    // The client has no fetch option, so it calls globalThis.fetch per attempt: wrapped here only to
    // learn when the answer's headers are in, so that the abort lands while its body is being read.
    const real = globalThis.fetch;
    let headersIn = () => {};
    const answered = new Promise<void>((resolve) => {
      headersIn = resolve;
    });
    let attempts = 0;
    const spy = vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      // The proxy's own fetch to the mock passes a URL string; the client's attempt, ky's Request.
      const fromClient = input instanceof Request;
      if (fromClient) attempts += 1;
      const response = await real(input, init);
      if (fromClient) headersIn();
      return response;
    });
    try {
      const pending = rejectionOf(
        client.messages.send(w.conversationId, { text: 'hello' }, { signal: controller.signal }),
      );
      await answered;
      controller.abort(new Error('the user left'));
      const error = await pending;

      expect(error).toBeInstanceOf(RequestAbortedError);
      expect(attempts).toBe(1);
      expect(w.requests().map((entry) => entry.method)).toEqual(['POST']);
      expect(retries()).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });

  test('on a `never` call is a TimeoutError, sent once', async () => {
    const { client, retries } = await stallingClient(w);

    const error = await rejectionOf(
      client.attachments.create(
        { name: 'a', mime_type: 'text/plain', size_bytes: 1 },
        { timeoutMs: SLOW_MS },
      ),
    );

    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toContain('timeoutMs');
    expect(w.requests().map((entry) => entry.path)).toEqual(['/v1/attachments']);
    expect(retries()).toEqual([]);
  });

  test('on every attempt gives up after maxRetries with the TimeoutError', async () => {
    const { client, retries } = await stallingClient(w, 3);

    const error = await rejectionOf(
      client.conversations.retrieve(w.conversationId, { timeoutMs: SLOW_MS, maxRetries: 1 }),
    );

    expect(error).toBeInstanceOf(TimeoutError);
    expect(w.requests()).toHaveLength(2);
    expect(retries()).toHaveLength(1);
  });
});
