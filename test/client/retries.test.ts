import {
  AgentClient,
  ConflictError,
  InternalServerError,
  RateLimitError,
  RequestAbortedError,
  TimeoutError,
} from 'agent-messaging';
import { describe, expect, test } from 'vitest';
import { rejectionOf, useWorld, type World } from './world.js';

const SEND_PATH = '/v1/conversations/*/messages';

async function agentMessageIds(world: World) {
  const { messages } = await world.client.conversations.listMessages(world.conversationId);
  return messages.filter((message) => message.sender.id === world.agentId).map((message) => message.id);
}

const keysOf = (world: World) => world.requests().map((entry) => entry.headers['idempotency-key']);
const retryLines = (world: World) => world.lines.filter((line) => line.message === 'agent-messaging retry');

describe.each(['msw', 'loopback'] as const)('retries over %s', (door) => {
  const w = useWorld(door);

  test('a 503 then success sends one message, with the same Idempotency-Key on both attempts', async () => {
    w.mock.faults.inject({ method: 'POST', path: SEND_PATH, fault: 'status', status: 503 });

    const { message } = await w.client.messages.send(w.conversationId, { text: 'hello' });

    const keys = keysOf(w);
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(await agentMessageIds(w)).toEqual([message.id]);
  });

  test('logs one line per attempt, the error answer before its retry, each with its own attempt number', async () => {
    w.mock.faults.inject({ method: 'POST', path: SEND_PATH, fault: 'status', status: 503, retry_after: 0 });

    await w.client.messages.send(w.conversationId, { text: 'hello' });

    expect(w.lines.map((line) => [line.message, line.fields.attempt, line.fields.status])).toEqual([
      ['agent-messaging request', 1, 503],
      ['agent-messaging retry', 2, undefined],
      ['agent-messaging request', 2, 201],
    ]);
    expect(retryLines(w)[0]?.fields).toMatchObject({ delayMs: 0, reason: 'InternalServerError' });
    const keys = keysOf(w);
    expect(keys).toEqual([keys[0], keys[0]]);
  });

  test('a connection dropped after the commit is retried and returns the original message', async () => {
    w.mock.faults.inject({ method: 'POST', path: SEND_PATH, fault: 'drop_after_commit' });

    const { message } = await w.client.messages.send(w.conversationId, { text: 'hello' });

    expect(keysOf(w)).toEqual([keysOf(w)[0], keysOf(w)[0]]);
    expect(await agentMessageIds(w)).toEqual([message.id]);
    expect(retryLines(w)[0]?.fields.reason).toBe('ConnectionError');
  });

  test('waits the Retry-After of a 429 before retrying', async () => {
    w.mock.faults.inject({
      method: 'POST',
      path: SEND_PATH,
      fault: 'status',
      status: 429,
      retry_after: 0.05,
    });

    await w.client.messages.send(w.conversationId, { text: 'hello' });

    expect(w.requests()).toHaveLength(2);
    expect(retryLines(w).map((line) => line.fields)).toEqual([
      expect.objectContaining({ attempt: 2, delayMs: 50, reason: 'RateLimitError' }),
    ]);
  });

  test('a Retry-After over a minute raises RateLimitError at once, without retrying', async () => {
    w.mock.faults.inject({
      method: 'POST',
      path: SEND_PATH,
      fault: 'status',
      status: 429,
      retry_after: 3600,
    });

    const error = await rejectionOf(w.client.messages.send(w.conversationId, { text: 'hello' }));

    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 3600 });
    expect(w.requests()).toHaveLength(1);
    expect(retryLines(w)).toEqual([]);
  });

  test('an abort during the backoff sleep rejects at once with RequestAbortedError', async () => {
    w.mock.faults.inject({ method: 'POST', path: SEND_PATH, fault: 'status', status: 503, retry_after: 30 });
    const controller = new AbortController();
    // Abort as soon as the client announces its 30 s sleep; a client that slept on would time the test out.
    const client = new AgentClient({
      apiKey: w.apiKey,
      baseUrl: w.baseUrl,
      logger: (message) => {
        if (message === 'agent-messaging retry') controller.abort(new Error('user gave up'));
      },
    });

    const error = await rejectionOf(
      client.messages.send(w.conversationId, { text: 'hello' }, { signal: controller.signal }),
    );

    expect(error).toBeInstanceOf(RequestAbortedError);
    expect((error as Error).cause).toEqual(new Error('user gave up'));
    expect(w.requests()).toHaveLength(1);
  });

  test('gives up after maxRetries and throws the last error', async () => {
    w.mock.faults.inject({
      method: 'POST',
      path: SEND_PATH,
      fault: 'status',
      status: 500,
      retry_after: 0,
      times: 5,
    });

    const error = await rejectionOf(w.client.messages.send(w.conversationId, { text: 'hello' }));

    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 500, code: 'internal_error' });
    expect(w.requests()).toHaveLength(3);
    expect(new Set(keysOf(w)).size).toBe(1);
  });

  test('maxRetries 0 on the call sends once', async () => {
    w.mock.faults.inject({ method: 'POST', path: SEND_PATH, fault: 'status', status: 503, retry_after: 0 });

    const error = await rejectionOf(
      w.client.messages.send(w.conversationId, { text: 'x' }, { maxRetries: 0 }),
    );

    expect(error).toBeInstanceOf(InternalServerError);
    expect(w.requests()).toHaveLength(1);
  });

  test('a POST without an Idempotency-Key is not retried', async () => {
    w.mock.faults.inject({
      method: 'POST',
      path: '/v1/attachments',
      fault: 'status',
      status: 503,
      retry_after: 0,
    });

    const error = await rejectionOf(
      w.client.attachments.create({ name: 'a', mime_type: 'text/plain', size_bytes: 1 }),
    );

    expect(error).toBeInstanceOf(InternalServerError);
    expect(w.requests()).toHaveLength(1);
  });

  test('409 idempotency_in_progress is retried, another 409 is not', async () => {
    w.mock.faults.inject({
      path: SEND_PATH,
      fault: 'status',
      status: 409,
      code: 'idempotency_in_progress',
      retry_after: 0,
    });
    await w.client.messages.send(w.conversationId, { text: 'a' });
    expect(w.requests()).toHaveLength(2);

    w.mock.faults.inject({ path: SEND_PATH, fault: 'status', status: 409, code: 'something_else' });
    const error = await rejectionOf(w.client.messages.send(w.conversationId, { text: 'b' }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(w.requests()).toHaveLength(3);
  });

  test('a GET whose connection drops is retried', async () => {
    w.mock.faults.inject({ method: 'GET', path: '/v1/conversations/*', fault: 'drop_after_commit' });

    const { conversation } = await w.client.conversations.retrieve(w.conversationId);

    expect(conversation.id).toBe(w.conversationId);
    expect(w.requests()).toHaveLength(2);
  });

  test('an unsend whose answer was lost is retried and answers the tombstone', async () => {
    const { message } = await w.client.messages.send(w.conversationId, { text: 'oops' });
    w.mock.faults.inject({ method: 'DELETE', path: '/v1/messages/*', fault: 'drop_after_commit' });

    const { message: tombstone } = await w.client.messages.unsend(message.id);

    expect(tombstone).toMatchObject({ id: message.id, status: 'deleted' });
    expect(w.requests().filter((entry) => entry.method === 'DELETE')).toHaveLength(2);
  });

  test('an attempt slower than timeoutMs is a TimeoutError; a retry that answers in time succeeds', async () => {
    // The retry must answer within timeoutMs on a loaded machine too; the delayed attempts never do.
    w.mock.faults.inject({ path: '/v1/conversations/*', fault: 'delay', delay_ms: 3000, times: 2 });

    const error = await rejectionOf(
      w.client.conversations.retrieve(w.conversationId, { timeoutMs: 1000, maxRetries: 0 }),
    );
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toContain('timeoutMs');

    const { conversation } = await w.client.conversations.retrieve(w.conversationId, { timeoutMs: 1000 });
    expect(conversation.id).toBe(w.conversationId);
    expect(w.requests()).toHaveLength(3);
  });
});
