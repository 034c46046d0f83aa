import type { ApiPromise } from '../core/api-promise.js';
import type { RequestOptions } from '../core/options.js';
import { parseInput, pathId } from '../core/validate.js';
import { SetWebhookRequest, SetWebhookResponse } from '../schemas/agents.js';
import { AgentId } from '../schemas/common.js';
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
    return this._request(() => ({
      method: 'PATCH',
      path: `/v1/agents/${pathId(AgentId, agentId, 'agentId', 'agents.setWebhook')}/webhook`,
      body: parseInput(SetWebhookRequest, body, 'agents.setWebhook'),
      schema: SetWebhookResponse,
      operation: 'agents.setWebhook',
      options,
    }));
  }
}
