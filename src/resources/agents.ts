import type { ApiPromise } from '../core/api-promise.js';
import type { RequestOptions } from '../core/options.js';
import type { SetWebhookRequest, SetWebhookResponse } from '../schemas/agents.js';
import { Resource } from './resource.js';

/** The agent's own settings. */
export class Agents extends Resource {
  /**
   * Sets the webhook URL; the service sends it a signed `webhook.test` and answers once it got a 2xx
   * (422 `webhook_verification_failed` otherwise, and nothing changes).
   *
   * @example
   * await client.agents.setWebhook(agent.id, { webhook_url: 'https://bot.example/hook', capabilities: ['text'] });
   */
  setWebhook(
    agentId: string,
    body: SetWebhookRequest,
    options?: RequestOptions,
  ): ApiPromise<SetWebhookResponse> {
    return this._transport.request('agents.setWebhook', { params: { agent_id: agentId }, body, options });
  }
}
