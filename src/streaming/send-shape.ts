// The first request of a streamed message: SPEC's send shape with `stream: true`.
import { ValidationError } from '../core/errors.js';
import { idempotencyKeyFor, randomIdempotencyKey } from '../core/idempotency.js';
import { parseInput } from '../core/validate.js';
import { AGENT_SEND_SCHEMA } from '../schemas/common.js';
import { SendMessageRequest } from '../schemas/messages.js';

/** What a streamed message starts with: the send shape without `schema` and `stream`, all optional. */
export interface StreamBody {
  /** Blocks to start with; the first text block is the one the reply writes to (the service adds an empty one when none). */
  content?: SendMessageRequest['content'];
  /** Plain-text rendering. */
  fallbackText?: string;
  /** The message this one answers. */
  replyToMessageId?: string;
  /** Free-form data of the agent, such as a run id. */
  metadata?: Record<string, unknown>;
}

/** The checked send shape of a streaming send. @internal */
export function streamingSendShape(body: StreamBody | undefined, context: string) {
  const value = body === undefined ? {} : body;
  const fields =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined))
      : undefined;
  if (fields === undefined) {
    const message = 'must be an object of send fields (content, fallbackText, replyToMessageId, metadata)';
    throw new ValidationError([{ field: 'body', message }], context);
  }
  const shape = { content: [], ...fields, schema: AGENT_SEND_SCHEMA, stream: true };
  return parseInput(SendMessageRequest, shape, context);
}

/** The text the reply's block starts with: the first text block of the send shape, or none. @internal */
export function initialBlockText(shape: SendMessageRequest): string {
  for (const block of shape.content) if (block.type === 'text') return block.text;
  return '';
}

/**
 * The start's `Idempotency-Key` (already checked): the caller's, else derived from the event, else
 * random. It is fixed before the first attempt, so every retry of the start carries the same key.
 * @internal
 */
export function startKey(idempotencyKey: string | undefined, eventId: string | undefined): string {
  if (idempotencyKey !== undefined) return idempotencyKey;
  return eventId === undefined ? randomIdempotencyKey() : idempotencyKeyFor(eventId, 'reply');
}
