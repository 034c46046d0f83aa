// The adapter's options: a bot's options (credentials, webhook secret, store) plus who the agent is.

import { ValidationError } from '../core/errors.js';
import type { BotOptions } from '../webhooks/bot-types.js';

/** Options of `createAgentMessagingAdapter`. */
export interface ChatSdkAdapterOptions extends BotOptions {
  /**
   * The agent's id (`agt_...`), so history read before the first delivery knows which messages are
   * the agent's own; learned from the first delivery otherwise.
   */
  agentId?: string;
  /** The bot's name in Chat SDK (mention matching, logs); the Chat instance's `userName` by default. */
  userName?: string;
}

/** Splits the options into the bot's and the adapter's own, checking the latter. @internal */
export function checkAdapterOptions(options: ChatSdkAdapterOptions): {
  bot: BotOptions;
  agentId: string | undefined;
  userName: string | undefined;
} {
  if (typeof options !== 'object' || options === null) {
    throw new ValidationError(
      [{ field: 'options', message: 'must be an object' }],
      'createAgentMessagingAdapter',
    );
  }
  const { agentId, userName, ...bot } = options;
  const issues = [];
  if (agentId !== undefined && (typeof agentId !== 'string' || !agentId.startsWith('agt_'))) {
    issues.push({ field: 'agentId', message: 'must be an agent id (agt_...)' });
  }
  if (userName !== undefined && (typeof userName !== 'string' || userName.trim() === '')) {
    issues.push({ field: 'userName', message: 'must be a non-blank string' });
  }
  if (issues.length > 0) throw new ValidationError(issues, 'createAgentMessagingAdapter');
  return { bot, agentId, userName };
}
