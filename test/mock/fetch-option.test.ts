import { AgentClient, registerAgent } from 'agent-messaging';
import { createMockService } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';

describe('mock.fetch as a client fetch', () => {
  it('keeps the method, headers and body of a Request passed with an init, as ky passes it', async () => {
    const mock = createMockService();
    const { agent, api_key } = await registerAgent(
      {
        handle: 'fetcher',
        display_name: 'Fetcher',
        webhook_url: 'http://bot.test/hook',
        capabilities: ['text'],
      },
      { baseUrl: mock.baseUrl, fetch: mock.fetch },
    );
    expect(agent.handle).toBe('fetcher');
    const client = new AgentClient({ apiKey: api_key, baseUrl: mock.baseUrl, fetch: mock.fetch });
    await expect(client.conversations.retrieve('cnv_missing')).rejects.toMatchObject({ status: 404 });

    const [register, retrieve] = mock.requests;
    expect(register).toMatchObject({ method: 'POST', path: '/v1/agents' });
    expect(JSON.parse(register?.body ?? '{}')).toMatchObject({ handle: 'fetcher' });
    expect(retrieve).toMatchObject({ method: 'GET', path: '/v1/conversations/cnv_missing' });
    expect(retrieve?.headers.authorization).toBe('Bearer ***');
  });

  it('resolves a relative URL against the base URL', async () => {
    const mock = createMockService({ baseUrl: 'http://ams.example' });
    const response = await mock.fetch('/v1/conversations/cnv_x', {
      headers: { authorization: 'Bearer nope' },
    });
    expect(response.status).toBe(401);
  });
});
