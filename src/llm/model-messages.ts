// toModelMessages: a conversation's messages as the messages a model API takes.

import * as z from 'zod/mini';
import { count, fn, parseInput } from '../core/validate.js';
import type { Message } from '../schemas/messages.js';
import { type FileUrlResolver, type Turn, turnsOf, withinChars } from './conversation-turns.js';
import { type ModelMessageFormat, type ModelMessageFormats, WRITERS } from './model-formats.js';

/** Options of {@link toModelMessages}. */
export interface ModelMessagesOptions<F extends ModelMessageFormat = ModelMessageFormat> {
  /** The agent whose messages are the `assistant`'s; everyone else is a `user`. */
  agentId: string;
  /** `openai` (chat completions), `ai-sdk` (`ModelMessage`) or `anthropic` (Messages API). */
  format: F;
  /**
   * Most characters of text to keep: the oldest messages go first.
   * @example maxChars: 24_000
   */
  maxChars?: number;
  /**
   * Where the model can fetch an attachment, by its id; without a URL an attachment is a note
   * such as `[file: att_123]` in the text.
   * @example fileUrl: ({ attachmentId }) => uploads.get(attachmentId)?.download_url
   */
  fileUrl?: FileUrlResolver;
}

/** The options toModelMessages and ctx.history share, checked. @internal */
export const MODEL_MESSAGES_OPTIONS = {
  format: z.enum(Object.keys(WRITERS) as ModelMessageFormat[]),
  maxChars: z.optional(count(1)),
  fileUrl: z.optional(fn<FileUrlResolver>()),
};

// The messages and the options, checked together.
const ModelMessagesInputSchema = z.object({
  messages: z.array(z.unknown(), { error: 'must be an array of Messages' }),
  agentId: z.string().check(z.regex(/\S/, { error: 'must be the agent id (a non-empty string)' })),
  ...MODEL_MESSAGES_OPTIONS,
});

/**
 * A conversation's messages as model messages, oldest first (whatever order they come in): the
 * agent's own messages are `assistant`, everyone else's `user` (with the sender's id as `name` in
 * the OpenAI format; in the others, a group's user text is quoted after the sender's id). Tombstones
 * are skipped; a quick-reply click is the label the user tapped; a cut reply keeps its interrupted
 * note. Anthropic's messages alternate roles, as its API requires.
 *
 * @example
 * // The newest 20 messages, the user's latest among them: the model's whole input.
 * const { messages } = await client.conversations.listMessages(cnv, { limit: 20 });
 * const history = toModelMessages(messages, { agentId, format: 'openai' });
 * await openai.chat.completions.create({ model, messages: history });
 */
export function toModelMessages<F extends ModelMessageFormat>(
  messages: readonly Message[],
  options: ModelMessagesOptions<F>,
): ModelMessageFormats[F][] {
  parseInput(ModelMessagesInputSchema, { ...options, messages }, 'toModelMessages');
  const turns = turnsOf(messages, options.agentId, options.fileUrl, 'toModelMessages');
  return writeTurns(turns, options.format, options.maxChars);
}

/** Turns, in the order given, as model messages of `format`, the newest `maxChars` of text kept. @internal */
export function writeTurns<F extends ModelMessageFormat>(
  all: Turn[],
  format: F,
  maxChars: number | undefined,
): ModelMessageFormats[F][] {
  const turns = withinChars(all, maxChars);
  const group = new Set(turns.filter((turn) => turn.role === 'user').map((turn) => turn.senderId)).size > 1;
  return WRITERS[format](turns, group);
}
