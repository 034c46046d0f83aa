import * as z from 'zod/mini';
import { type ApiPromise, apiPromise } from '../core/api-promise.js';
import { clientOptions, resolveConfig } from '../core/client-config.js';
import type { ConnectionOptions, RequestOptions } from '../core/options.js';
import { Transport } from '../core/transport.js';
import { RequestOptionsSchema } from '../core/validate.js';
import type { RegisterAgentRequest, RegisterAgentResponse } from '../schemas/agents.js';

// The connection options, an optional token, and the per-call options but maxRetries (never retried).
const OPTIONS = z.extend(
  clientOptions('apiKey', false),
  z.omit(RequestOptionsSchema, { maxRetries: true }).shape,
);

/** Options of `registerAgent`: where to register, and the per-call options. */
export interface RegisterAgentOptions extends ConnectionOptions, Omit<RequestOptions, 'maxRetries'> {
  /** A bearer token to send; registration needs none (PROTOCOL.md section 3). */
  apiKey?: string;
}

/**
 * Registers an agent. The answer holds `api_key` and `webhook_secret`, shown this once: store them.
 * Never retried: the service does not deduplicate registration, and a repeat after a lost answer
 * would meet `handle_taken` with the credentials of the first attempt lost.
 *
 * @example
 * const { agent, api_key, webhook_secret } = await registerAgent(
 *   { handle: 'weather', display_name: 'Weather', webhook_url: 'https://bot.example/hook', capabilities: ['text'] },
 *   { baseUrl },
 * );
 */
export function registerAgent(
  body: RegisterAgentRequest,
  options: RegisterAgentOptions = {},
): ApiPromise<RegisterAgentResponse> {
  try {
    const config = resolveConfig(options, OPTIONS, 'apiKey', 'registerAgent');
    const { idempotencyKey, signal, timeoutMs, headers } = options;
    return new Transport(config).request('agents.register', {
      body,
      options: { idempotencyKey, signal, timeoutMs, headers },
      operation: 'registerAgent',
    });
  } catch (error) {
    return apiPromise(Promise.reject(error));
  }
}
