// toModelMessages: a conversation's messages as the messages a model API takes.
import { ValidationError } from '../core/errors.js';
import type { FieldIssue } from '../schemas/issues.js';
import type { Message } from '../schemas/messages.js';
import { type FileUrlResolver, type Turn, turnsOf, withinChars } from './conversation-turns.js';
import {
  FORMATS,
  type ModelMessageFormat,
  type ModelMessageFormats,
  toAiSdk,
  toAnthropic,
  toOpenAI,
} from './model-formats.js';

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

const positiveInt = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value > 0;

/** Checks the options shared by toModelMessages and ctx.history. @internal */
export function modelMessagesIssues(options: Partial<ModelMessagesOptions> | undefined): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const { format, maxChars, fileUrl } = options ?? {};
  if (!FORMATS.includes(format as ModelMessageFormat)) {
    issues.push({ field: 'format', message: "must be 'openai', 'ai-sdk' or 'anthropic'" });
  }
  if (maxChars !== undefined && !positiveInt(maxChars)) {
    issues.push({ field: 'maxChars', message: 'must be a positive integer' });
  }
  if (fileUrl !== undefined && typeof fileUrl !== 'function') {
    issues.push({ field: 'fileUrl', message: 'must be a function' });
  }
  return issues;
}

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
  const issues = modelMessagesIssues(options);
  if (typeof options?.agentId !== 'string' || options.agentId.trim() === '') {
    issues.unshift({ field: 'agentId', message: 'must be the agent id (a non-empty string)' });
  }
  if (!Array.isArray(messages))
    issues.unshift({ field: 'messages', message: 'must be an array of Messages' });
  if (issues.length > 0) throw new ValidationError(issues, 'toModelMessages');
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
  const chosen: ModelMessageFormat = format;
  const written =
    chosen === 'openai'
      ? toOpenAI(turns)
      : chosen === 'ai-sdk'
        ? toAiSdk(turns, group)
        : toAnthropic(turns, group);
  return written as ModelMessageFormats[F][];
}
