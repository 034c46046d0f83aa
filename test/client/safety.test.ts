// What keeps a call from doing harm: no blind retry of a call the service does not deduplicate, no
// option that silently does nothing, no header that fights the SDK's own, no endless paging.
import {
  AgentClient,
  ConflictError,
  ConnectionError,
  InvalidResponseError,
  RateLimitError,
  type RequestOptions,
  registerAgent,
  ValidationError,
} from 'agent-messaging';
import { HttpResponse, http } from 'msw';
import { afterEach, describe, expect, test, vi } from 'vitest';
// Private: unit tests of the retry policy's own pieces (Retry-After parsing, the delay it picks).
import { parseRetryAfter, retryDelayMs } from '../../src/core/retry.js';
import { rejectionOf, useWorld } from './world.js';

describe.each(['msw', 'loopback'] as const)('calls that must not repeat, over %s', (door) => {
  const w = useWorld(door);

  test('an append carrying a caller-given Idempotency-Key is not retried after a lost answer', async () => {
    const stream = await w.client.messages.stream(w.conversationId, {});
    let messageId = '';
    let blockId = '';
    for await (const event of stream) {
      if (event.type === 'message.started') {
        messageId = event.message.id;
        blockId = event.message.content[0]?.id ?? '';
        break;
      }
    }
    w.mock.faults.inject({
      method: 'POST',
      path: '/v1/messages/*/blocks/*/append',
      fault: 'drop_after_commit',
    });

    const error = await rejectionOf(
      w.client.messages.append(
        messageId,
        blockId,
        { path: '/text', value: 'Hello' },
        { idempotencyKey: 'append-1' },
      ),
    );

    expect(ConnectionError.is(error)).toBe(true);
    expect(w.requests().filter((entry) => entry.path.endsWith('/append'))).toHaveLength(1);
    const { messages } = await w.client.conversations.listMessages(w.conversationId);
    const text = messages.find((message) => message.id === messageId)?.parts?.[0]?.text;
    expect(text).toBe('Hello');
  });

  test('a registration is sent once even with an idempotencyKey, so its one-time credentials are not lost to handle_taken', async () => {
    w.mock.faults.inject({ method: 'POST', path: '/v1/agents', fault: 'drop_after_commit' });

    const error = await rejectionOf(
      registerAgent(
        {
          handle: 'once_only',
          display_name: 'Once',
          webhook_url: 'https://bot.example/h',
          capabilities: ['text'],
        },
        { baseUrl: w.baseUrl, idempotencyKey: 'register-once-1' },
      ),
    );

    expect(ConnectionError.is(error)).toBe(true);
    expect(w.requests().filter((entry) => entry.path === '/v1/agents')).toHaveLength(1);
  });

  test('a 503 with a Retry-After of an hour raises RateLimitError at once, keeping its status', async () => {
    w.mock.faults.inject({ path: '/v1/conversations/*', fault: 'status', status: 503, retry_after: 3600 });

    const error = await rejectionOf(w.client.conversations.retrieve(w.conversationId));

    expect(RateLimitError.is(error)).toBe(true);
    expect(error).toMatchObject({ status: 503, code: 'unavailable', retryAfter: 3600 });
    expect((error as Error).message).toMatch(/^503 unavailable: /);
    expect(w.requests()).toHaveLength(1);
  });

  test('waits for a Retry-After of 0.05 s before the second attempt', async () => {
    const sentAt: number[] = [];
    const client = new AgentClient({
      apiKey: w.apiKey,
      baseUrl: w.baseUrl,
      fetch: (input, init) => {
        sentAt.push(performance.now());
        return globalThis.fetch(input, init);
      },
    });
    w.mock.faults.inject({ path: '/v1/conversations/*', fault: 'status', status: 429, retry_after: 0.05 });

    await client.conversations.retrieve(w.conversationId);

    expect(sentAt).toHaveLength(2);
    // A lower bound on the pause, not a speed measurement: the retry did not come before the service allowed.
    expect(sentAt[1]! - sentAt[0]!).toBeGreaterThanOrEqual(45);
  });
});

describe('options that would silently do nothing, or fight the SDK', () => {
  const w = useWorld('msw');

  test.each([
    [{ idempotency_key: 'evt_123456789' }, 'idempotency_key'],
    [{ idempotencykey: 'evt_123456789' }, 'idempotencykey'],
    [{ headers: { 'Idempotency-Key': 'my-key-123456' } }, 'headers.Idempotency-Key'],
    [{ headers: { authorization: 'Bearer other' } }, 'headers.authorization'],
  ])('refuses %j naming %s, and sends nothing', async (options, field) => {
    const error = await rejectionOf(
      w.client.messages.send(w.conversationId, { text: 'hi' }, options as unknown as RequestOptions),
    );

    expect(ValidationError.is(error)).toBe(true);
    expect((error as ValidationError).issues.map((issue) => issue.field)).toContain(field);
    expect(w.requests()).toHaveLength(0);
  });

  test('a header given in another case replaces the SDK default instead of joining it', async () => {
    await w.client.messages.send(
      w.conversationId,
      { text: 'hi' },
      { headers: { 'Content-Type': 'application/json; charset=utf-8' } },
    );

    expect(w.requests()[0]?.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  test('a misspelt client option is an error at construction', () => {
    const error = (() => {
      try {
        new AgentClient({ apiKey: w.apiKey, baseURL: w.baseUrl } as never);
      } catch (caught) {
        return caught;
      }
    })();

    expect(ValidationError.is(error)).toBe(true);
    expect((error as ValidationError).issues.map((issue) => issue.field)).toContain('baseURL');
  });

  test('a base URL with a password is refused without repeating the password', () => {
    const error = (() => {
      try {
        new AgentClient({ apiKey: w.apiKey, baseUrl: 'http://user:s3cretpw@127.0.0.1:9' });
      } catch (caught) {
        return caught;
      }
    })();

    expect(ValidationError.is(error)).toBe(true);
    expect((error as ValidationError).issues).toEqual([
      { field: 'baseUrl', message: 'must not contain a user name or password' },
    ]);
    expect(String((error as Error).message)).not.toContain('s3cretpw');
  });

  test('history stops with InvalidResponseError when the service ignores before_sequence', async () => {
    const page = Array.from({ length: 2 }, (_, i) => ({
      id: `msg_${i}`,
      conversation_id: w.conversationId,
      sequence: 10 - i,
      sender: { id: w.userId },
      status: 'sent',
      created_at: new Date().toISOString(),
      parts: [],
    }));
    w.server?.use(
      http.get(`${w.baseUrl}/v1/conversations/:id/messages`, () => HttpResponse.json({ messages: page })),
    );

    const seen: string[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const message of w.client.conversations.history(w.conversationId, { limit: 2 })) {
          seen.push(message.id);
        }
      })(),
    );

    expect(InvalidResponseError.is(error)).toBe(true);
    expect(seen).toEqual(['msg_0', 'msg_1']);
  });
});

describe('backoff', () => {
  afterEach(() => vi.restoreAllMocks());

  test('grows exponentially with full jitter, up to 8 s', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999_999);
    const ceilings = [1, 2, 3, 4, 5, 6, 7].map((retry) => retryDelayMs(new Error('lost'), retry));
    expect(ceilings).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000]);

    vi.spyOn(Math, 'random').mockReturnValue(0);
    expect(retryDelayMs(new Error('lost'), 3)).toBe(0);
  });

  test('waits at least a second after 409 idempotency_in_progress, while the first attempt runs on', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const inProgress = new ConflictError({ status: 409, code: 'idempotency_in_progress', message: 'busy' });
    expect(retryDelayMs(inProgress, 1)).toBe(1000);
    vi.spyOn(Math, 'random').mockReturnValue(0.999_999);
    expect(retryDelayMs(inProgress, 4)).toBe(4000);
  });

  test('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});
