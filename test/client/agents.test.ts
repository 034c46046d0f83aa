import {
  AgentClient,
  ConflictError,
  PermissionDeniedError,
  registerAgent,
  UnprocessableEntityError,
} from 'agent-messaging';
import { describe, expect, test } from 'vitest';
import { bodyOf, rejectionOf, useWorld } from './world.js';

const w = useWorld('msw');
const body = {
  display_name: 'Bot',
  webhook_url: 'https://bot.example/hook',
  capabilities: ['text' as const],
};

describe('agents.register', () => {
  test('registers a pending agent and answers its credentials once, snake_case on the wire', async () => {
    const registered = await registerAgent({ handle: 'fresh_bot', ...body }, w.options());

    expect(registered.agent).toMatchObject({
      handle: 'fresh_bot',
      display_name: 'Bot',
      status: 'pending_webhook',
    });
    expect(registered.agent.id).toMatch(/^agt_/);
    expect(registered.api_key).toEqual(expect.any(String));
    expect(registered.webhook_secret).toMatch(/^whsec_/);
    const [sent] = w.requests();
    expect(sent).toMatchObject({ method: 'POST', path: '/v1/agents' });
    expect(sent?.headers.authorization).toBeUndefined();
    expect(bodyOf(sent)).toEqual({ handle: 'fresh_bot', ...body });
    expect(JSON.stringify(w.lines)).not.toContain(registered.api_key);
  });

  test('a handle already in use is a ConflictError', async () => {
    await registerAgent({ handle: 'taken_bot', ...body }, w.options());

    const error = await rejectionOf(registerAgent({ handle: 'taken_bot', ...body }, w.options()));

    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: 'handle_taken' });
  });
});

describe('agents.setWebhook', () => {
  test('verifies the webhook with a PATCH and makes the agent active', async () => {
    const { agent, api_key } = await registerAgent({ handle: 'new_bot', ...body }, w.options());
    const client = new AgentClient({ apiKey: api_key, ...w.options() });
    const cnv = w.mock.installAgent({ user_id: w.userId, agent_id: agent.id }).conversation_id;
    const before = await rejectionOf(client.conversations.typing(cnv, { state: 'start' }));

    const answer = await client.agents.setWebhook(agent.id, {
      webhook_url: 'https://bot.example/v2',
      capabilities: ['text'],
    });

    expect(before).toBeInstanceOf(PermissionDeniedError);
    expect(await client.conversations.typing(cnv, { state: 'start' })).toMatchObject({ state: 'start' });
    expect(answer).toEqual(
      expect.objectContaining({
        agent_id: agent.id,
        webhook_url: 'https://bot.example/v2',
        webhook_status: 'verified',
      }),
    );
    const patch = w.requests().find((entry) => entry.method === 'PATCH');
    expect(patch?.path).toBe(`/v1/agents/${agent.id}/webhook`);
    expect(bodyOf(patch)).toEqual({ webhook_url: 'https://bot.example/v2', capabilities: ['text'] });
  });

  test('a webhook that does not answer 2xx is an UnprocessableEntityError', async () => {
    const error = await rejectionOf(
      w.client.agents.setWebhook(w.agentId, { webhook_url: 'https://bot.example/failing' }),
    );

    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error).toMatchObject({ status: 422, code: 'webhook_verification_failed' });
  });
});
