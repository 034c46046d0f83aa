// ctx.history(): the conversation up to and with the run's messages, paged with the history
// iterator, as model messages.
import * as z from 'zod/mini';
import { count, parseInput } from '../core/validate.js';
import type { ListMessagesQuery } from '../schemas/conversations.js';
import type { Message } from '../schemas/messages.js';
import { turnsOf } from './conversation-turns.js';
import type { ModelMessageFormat, ModelMessageFormats } from './model-formats.js';
import { MODEL_MESSAGES_OPTIONS, type ModelMessagesOptions, writeTurns } from './model-messages.js';

/** Messages `ctx.history()` reads when no `limit` is given. */
export const DEFAULT_HISTORY_LIMIT = 50;

const HistoryOptionsSchema = z.object({ ...MODEL_MESSAGES_OPTIONS, limit: z.optional(count(1)) });

/** Options of `ctx.history()`: those of toModelMessages but the agent (the bot's own), and a limit. */
export interface HistoryOptions<F extends ModelMessageFormat = ModelMessageFormat>
  extends Omit<ModelMessagesOptions<F>, 'agentId'> {
  /**
   * Most messages to read before the run's first one, tombstones not counted (default 50); the
   * run's own messages always come.
   * @example limit: 20
   */
  limit?: number;
}

/** Where a handler stands: its conversation, its agent, and the messages of its run. @internal */
export interface HistoryAnchor {
  /** An AgentClient, by the one method read here (llm/ stays below the client in the import graph). */
  client: { conversations: { history(id: string, query: ListMessagesQuery): AsyncIterable<Message> } };
  conversationId: string;
  agentId: string;
  /** The run's messages, oldest first (the triggering message last). */
  batch: readonly Message[];
}

/**
 * The conversation as the model should get it, oldest first, ending with the run's messages: what
 * came before the run's first message (newest first through the history iterator, until `limit`
 * messages or `maxChars` of text are in hand), then the agent's answers posted since to anything
 * but this run's messages or later users' (under `'queue'` the answers to the messages before this
 * one, which the user already sees), then the run's messages. An answer to one of this run's
 * messages is left out: a retried delivery must not feed the model its own earlier, cut reply.
 * @internal
 */
export async function conversationHistory<F extends ModelMessageFormat>(
  anchor: HistoryAnchor,
  options: HistoryOptions<F>,
): Promise<ModelMessageFormats[F][]> {
  parseInput(HistoryOptionsSchema, options, 'ctx.history');
  const limit = options.limit ?? DEFAULT_HISTORY_LIMIT;
  const { format, maxChars, fileUrl } = options;
  const { batch, agentId } = anchor;
  const first = Math.min(...batch.map((message) => message.sequence));
  // Not for the model: the run's messages (given last, below) and what others said after them.
  const unseen = new Set(batch.map((message) => message.id));
  const since: Message[] = [];
  const before: Message[] = [];
  let chars = 0;
  const query = { limit: Math.min(limit, 100) };
  for await (const message of anchor.client.conversations.history(anchor.conversationId, query)) {
    if (message.sequence >= first) {
      // Every later message is read before any earlier one, so `unseen` is whole once the answers
      // are sorted out below (a withdrawn message's answers stay out too).
      if (message.sender.id !== agentId) unseen.add(message.id);
      else if (message.status !== 'deleted') since.push(message);
      continue;
    }
    if (message.status === 'deleted') continue;
    before.push(message);
    chars += (message.fallback_text ?? '').length;
    if (before.length >= limit || (maxChars !== undefined && chars >= maxChars)) break;
  }
  const answers = since.filter((message) => !unseen.has(message.reply_to?.message_id ?? ''));
  const turns = [
    ...turnsOf([...before, ...answers], agentId, fileUrl, 'ctx.history'),
    ...turnsOf(batch, agentId, fileUrl, 'ctx.history'),
  ];
  return writeTurns(turns, format, maxChars);
}
