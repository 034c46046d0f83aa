// ctx.history(): the conversation before the triggering message, paged with the history iterator,
// as model messages.
import { ValidationError } from '../core/errors.js';
import type { ListMessagesQuery } from '../schemas/conversations.js';
import type { Message } from '../schemas/messages.js';
import type { FileUrlResolver } from './conversation-turns.js';
import type { ModelMessageFormat, ModelMessageFormats } from './model-formats.js';
import { modelMessagesIssues, toModelMessages } from './model-messages.js';

/** Messages `ctx.history()` reads when no `limit` is given. */
export const DEFAULT_HISTORY_LIMIT = 50;

/** Options of `ctx.history()`. */
export interface HistoryOptions<F extends ModelMessageFormat = ModelMessageFormat> {
  /** `openai`, `ai-sdk` or `anthropic`. */
  format: F;
  /**
   * Most messages to read, tombstones not counted (default 50).
   * @example limit: 20
   */
  limit?: number;
  /** Most characters of text to keep: the oldest messages go first. */
  maxChars?: number;
  /** Where the model can fetch an attachment (see toModelMessages). */
  fileUrl?: FileUrlResolver;
}

/** Where a handler stands: its conversation, its agent, and the sequence of the triggering message. @internal */
export interface HistoryAnchor {
  /** An AgentClient, by the one method read here (llm/ stays below the client in the import graph). */
  client: { conversations: { history(id: string, query: ListMessagesQuery): AsyncIterable<Message> } };
  conversationId: string;
  agentId: string;
  /** The triggering message's sequence: only what came before it is read. */
  beforeSequence: number;
}

/**
 * Reads the conversation before the triggering message, newest first through the history
 * iterator, until `limit` messages (or `maxChars` of text) are in hand, and writes them oldest
 * first as model messages. Stopping at the trigger keeps a retried delivery from feeding the
 * model its own earlier, cut reply to the same message.
 * @internal
 */
export async function conversationHistory<F extends ModelMessageFormat>(
  anchor: HistoryAnchor,
  options: HistoryOptions<F>,
): Promise<ModelMessageFormats[F][]> {
  const issues = modelMessagesIssues(options);
  const limit = options?.limit ?? DEFAULT_HISTORY_LIMIT;
  if (!Number.isInteger(limit) || limit < 1)
    issues.push({ field: 'limit', message: 'must be a positive integer' });
  if (issues.length > 0) throw new ValidationError(issues, 'ctx.history');
  const { format, maxChars, fileUrl } = options;
  const messages: Message[] = [];
  if (anchor.beforeSequence > 1) {
    let chars = 0;
    const query = { before_sequence: anchor.beforeSequence, limit: Math.min(limit, 100) };
    for await (const message of anchor.client.conversations.history(anchor.conversationId, query)) {
      if (message.status === 'deleted') continue;
      messages.push(message);
      chars += (message.fallback_text ?? '').length;
      if (messages.length >= limit || (maxChars !== undefined && chars >= maxChars)) break;
    }
  }
  return toModelMessages(messages, {
    agentId: anchor.agentId,
    format,
    ...(maxChars === undefined ? {} : { maxChars }),
    ...(fileUrl === undefined ? {} : { fileUrl }),
  });
}
