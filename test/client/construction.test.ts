import { inspect } from 'node:util';
import { AgentClient, ConnectionError, registerAgent, UserClient, ValidationError } from 'agent-messaging';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { rejectionOf } from './world.js';

const TOKEN = 'ams_sk_construction_secret_0123456789abcd';

/** A fetch that records what it is given and answers a valid conversation. */
function recordingFetch() {
  const seen: Request[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    seen.push(input instanceof Request ? input.clone() : new Request(input, init));
    const conversation = {
      id: 'cnv_1',
      participant_count: 2,
      last_sequence: 0,
      created_at: '2026-01-01T00:00:00Z',
    };
    return Response.json({ conversation }, { headers: { 'request-id': 'req_1' } });
  };
  return { seen, fetch };
}

/** What the constructor threw. */
function thrownBy(make: () => unknown): ValidationError {
  try {
    make();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('expected the constructor to throw');
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('client options', () => {
  test.each([
    ['a missing apiKey', () => new AgentClient({ baseUrl: 'http://a.test' } as never), 'apiKey'],
    ['a blank apiKey', () => new AgentClient({ apiKey: '   ', baseUrl: 'http://a.test' }), 'apiKey'],
    ['a missing sessionToken', () => new UserClient({ baseUrl: 'http://a.test' } as never), 'sessionToken'],
    ['a malformed baseUrl', () => new AgentClient({ apiKey: TOKEN, baseUrl: 'ams.example.com' }), 'baseUrl'],
    [
      'a baseUrl that is not http',
      () => new AgentClient({ apiKey: TOKEN, baseUrl: 'ftp://ams.example.com' }),
      'baseUrl',
    ],
    [
      'a negative maxRetries',
      () => new AgentClient({ apiKey: TOKEN, baseUrl: 'http://a.test', maxRetries: -1 }),
      'maxRetries',
    ],
    [
      'a zero timeoutMs',
      () => new AgentClient({ apiKey: TOKEN, baseUrl: 'http://a.test', timeoutMs: 0 }),
      'timeoutMs',
    ],
    [
      'a logger without debug',
      () => new AgentClient({ apiKey: TOKEN, baseUrl: 'http://a.test', logger: {} as never }),
      'logger',
    ],
  ])('%s is a ValidationError naming the option', (_name, make, field) => {
    expect(thrownBy(make).field).toBe(field);
  });

  test('a missing baseUrl without AMS_BASE_URL is a ValidationError that says how to set it', () => {
    vi.stubEnv('AMS_BASE_URL', '');

    const error = thrownBy(() => new AgentClient({ apiKey: TOKEN }));

    expect(error.field).toBe('baseUrl');
    expect(error.message).toContain('AMS_BASE_URL');
  });

  test('baseUrl falls back to the AMS_BASE_URL env var', () => {
    vi.stubEnv('AMS_BASE_URL', 'https://env.example.com/');

    expect(new AgentClient({ apiKey: TOKEN }).baseUrl).toBe('https://env.example.com');
  });

  test('a token with a space is refused without being shown', () => {
    const secret = 'secret value';

    const error = thrownBy(() => new AgentClient({ apiKey: secret, baseUrl: 'http://a.test' }));

    expect(error.field).toBe('apiKey');
    expect(error.message).not.toContain(secret);
  });

  test('a token of any form is sent as given: the client does not judge it by its prefix', async () => {
    const { seen, fetch } = recordingFetch();
    const client = new AgentClient({
      apiKey: 'not-an-ams-looking-token',
      baseUrl: 'https://h.example/api/',
      fetch,
    });

    await client.conversations.retrieve('cnv_1');

    expect(seen[0]?.url).toBe('https://h.example/api/v1/conversations/cnv_1');
    expect(seen[0]?.headers.get('authorization')).toBe('Bearer not-an-ams-looking-token');
  });

  test('neither inspect nor JSON of a client shows its credential', () => {
    const agent = new AgentClient({ apiKey: TOKEN, baseUrl: 'http://a.test' });
    const user = new UserClient({ sessionToken: TOKEN, baseUrl: 'http://a.test' });

    for (const client of [agent, user]) {
      expect(inspect(client, { showHidden: true, depth: 10 })).not.toContain(TOKEN);
      expect(JSON.stringify(client)).not.toContain(TOKEN);
      expect(inspect(client._transport, { showHidden: true, depth: 10 })).not.toContain(TOKEN);
      expect(inspect(client.messages, { showHidden: true, depth: 10 })).not.toContain(TOKEN);
    }
    expect(JSON.stringify(agent)).toBe('{"baseUrl":"http://a.test","apiKey":"[redacted]"}');
  });

  test('the logger gets one line per attempt, as a function or an object with debug, never the token', async () => {
    const lines: unknown[] = [];
    const { fetch } = recordingFetch();
    const asFunction = new AgentClient({
      apiKey: TOKEN,
      baseUrl: 'http://a.test',
      fetch,
      logger: (...line) => lines.push(line),
    });
    const asObject = new AgentClient({
      apiKey: TOKEN,
      baseUrl: 'http://a.test',
      fetch,
      logger: { debug: (...line: unknown[]) => lines.push(line) },
    });

    await asFunction.conversations.retrieve('cnv_1');
    await asObject.conversations.retrieve('cnv_1');

    expect(lines).toEqual([
      [
        'agent-messaging request',
        expect.objectContaining({
          method: 'GET',
          path: '/v1/conversations/cnv_1',
          status: 200,
          attempt: 1,
          requestId: 'req_1',
        }),
      ],
      ['agent-messaging request', expect.objectContaining({ status: 200, attempt: 1 })],
    ]);
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
  });

  test('a refused connection is a ConnectionError after the retries, without the token', async () => {
    const client = new AgentClient({ apiKey: TOKEN, baseUrl: 'http://127.0.0.1:9', maxRetries: 1 });

    const error = await rejectionOf(client.conversations.retrieve('cnv_1'));

    expect(error).toBeInstanceOf(ConnectionError);
    expect(`${String(error)} ${inspect(error, { depth: 10 })}`).not.toContain(TOKEN);
  });
});

describe('agents.register', () => {
  const body = {
    handle: 'weather',
    display_name: 'Weather',
    webhook_url: 'https://bot.example/hook',
    capabilities: ['text' as const],
  };

  test('sends no Authorization header unless a token is given', async () => {
    const plain = recordingFetch();
    const withToken = recordingFetch();

    await rejectionOf(registerAgent(body, { baseUrl: 'http://a.test', fetch: plain.fetch }));
    await rejectionOf(
      registerAgent(body, { baseUrl: 'http://a.test', fetch: withToken.fetch, apiKey: TOKEN }),
    );

    expect(plain.seen[0]?.headers.has('authorization')).toBe(false);
    expect(withToken.seen[0]?.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
    expect(plain.seen[0]?.method).toBe('POST');
    expect(await plain.seen[0]?.json()).toEqual(body);
  });

  test('an unknown capability is a ValidationError and nothing is sent', async () => {
    const { seen, fetch } = recordingFetch();

    const error = await rejectionOf(
      registerAgent({ ...body, capabilities: ['telepathy' as 'text'] }, { baseUrl: 'http://a.test', fetch }),
    );

    expect((error as ValidationError).field).toBe('capabilities[0]');
    expect(seen).toEqual([]);
  });

  test('a handle with capitals is a ValidationError naming handle', async () => {
    const error = await rejectionOf(
      registerAgent({ ...body, handle: 'Weather' }, { baseUrl: 'http://a.test' }),
    );

    expect(error).toMatchObject({ field: 'handle' });
  });
});
