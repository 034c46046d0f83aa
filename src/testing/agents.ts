import { generateWebhookSecret } from '../webhooks/verify.js';
import { json, MockError, notFound } from './http.js';
import { newId, newToken } from './ids.js';
import { agentChanged } from './live-feed.js';
import { endpoint } from './router.js';
import type { AgentRecord } from './state.js';

/** The agent object as the wire shows it; credentials are never part of it. */
export function agentView(agent: AgentRecord) {
  return {
    id: agent.id,
    handle: agent.handle,
    display_name: agent.display_name,
    status: agent.status,
    webhook_url: agent.webhook_url,
    capabilities: [...agent.capabilities],
    webhook_status: agent.webhook_status,
  };
}

/** `POST /v1/agents`: no token needed; answers the credentials once. */
export const registerAgent = endpoint('agents.register', {
  handle: (ctx) => {
    const { state } = ctx.world;
    const { handle } = ctx.body;
    if ([...state.agents.values()].some((agent) => agent.handle === handle)) {
      throw new MockError(409, 'handle_taken', `handle: "${handle}" is already in use`);
    }
    const agent: AgentRecord = {
      id: newId('agt'),
      ...ctx.body,
      status: 'pending_webhook',
      webhook_status: 'unverified',
      api_key: newToken('ams_sk_'),
      webhook_secret: generateWebhookSecret(),
      created_at: ctx.world.clock.now(),
    };
    state.agents.set(agent.id, agent);
    state.callers.set(agent.api_key, { kind: 'agent', id: agent.id, agent });
    agentChanged(ctx.world, agent, 'created');
    return json(201, {
      agent: agentView(agent),
      api_key: agent.api_key,
      webhook_secret: agent.webhook_secret,
    });
  },
});

/** `PATCH /v1/agents/{id}/webhook`: a 2xx to webhook.test within 10 s verifies; else nothing changes. */
export const setWebhook = endpoint('agents.setWebhook', {
  handle: async (ctx) => {
    const { agent } = ctx.caller;
    // Another agent's id is indistinguishable from an unknown one.
    if (ctx.params.agent_id !== agent.id) throw notFound(`agent ${ctx.params.agent_id}`);
    const { webhook_url, capabilities } = ctx.body;
    const result = await ctx.world.webhooks.verify(agent, webhook_url);
    if (result.error !== null) {
      throw new MockError(
        422,
        'webhook_verification_failed',
        `webhook_url: webhook.test was not answered with a 2xx within 10 s (${result.error})`,
      );
    }
    agent.webhook_url = webhook_url;
    if (capabilities) agent.capabilities = [...capabilities];
    agent.webhook_status = 'verified';
    agent.status = 'active';
    agentChanged(ctx.world, agent, 'updated');
    return json(200, { agent_id: agent.id, webhook_url, webhook_status: agent.webhook_status });
  },
});
