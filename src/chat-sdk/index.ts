/**
 * `agent-messaging/chat-sdk`: run bots written for Vercel's Chat SDK on the Agent Messaging Service.
 *
 * @example
 * import { Chat } from 'chat';
 * import { createMemoryState } from '@chat-adapter/state-memory';
 * import { createAgentMessagingAdapter } from 'agent-messaging/chat-sdk';
 *
 * const chat = new Chat({
 *   userName: 'weather',
 *   adapters: { agentMessaging: createAgentMessagingAdapter({ apiKey, webhookSecret }) },
 *   state: createMemoryState(),
 * });
 * chat.onNewMention(async (thread, message) => {
 *   await thread.subscribe();
 *   await thread.post(`You said: ${message.text}`);
 * });
 * export default { fetch: (request: Request) => chat.webhooks.agentMessaging(request) };
 *
 * @packageDocumentation
 */

import { AgentMessagingAdapter, type ChatSdkAdapterOptions } from './adapter.js';

export type {
  AgentMessagingAdapter,
  AgentMessagingRawMessage,
  AgentMessagingThread,
  ChatSdkAdapterOptions,
  ConversationKind,
} from './adapter.js';

/** Chat SDK's platform adapter for this service: verified deliveries in, posts and streams out. */
export function createAgentMessagingAdapter(options: ChatSdkAdapterOptions): AgentMessagingAdapter {
  return new AgentMessagingAdapter(options);
}
