// What `messages.send` accepts, and the wire send shape built from it (checked once, before sending).

import * as z from 'zod/mini';
import { ValidationError } from '../core/errors.js';
import { parseInput } from '../core/validate.js';
import { AGENT_SEND_SCHEMA } from '../schemas/common.js';
import { SendMessageRequest, TextBlock } from '../schemas/messages.js';

/** The `{ text }` shorthand: one text block, with the same text as `fallbackText` unless one is given. */
export const SendTextInput = z.strictObject({
  text: TextBlock.shape.text,
  fallbackText: SendMessageRequest.shape.fallbackText,
  replyToMessageId: SendMessageRequest.shape.replyToMessageId,
  metadata: SendMessageRequest.shape.metadata,
});
/** The `{ text }` shorthand of `messages.send`. */
export type SendTextInput = z.input<typeof SendTextInput>;

/** The full send shape (camelCase, as on the wire); `schema` is filled in for you. */
export type SendContentInput = Omit<SendMessageRequest, 'schema' | 'stream'> & {
  schema?: SendMessageRequest['schema'];
};

/** What `messages.send` accepts: the `{ text }` shorthand or the full send shape. */
export type SendInput = SendTextInput | SendContentInput;

/**
 * Builds the wire body from a send input (the transport then checks it against the endpoint's
 * schema). Throws a ValidationError naming the field before anything is sent.
 * @internal
 */
export function buildSendBody(input: unknown, context: string): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ValidationError([{ field: '', message: 'must be an object with text or content' }], context);
  }
  if ('stream' in input) {
    const message = 'is set by the SDK: use messages.stream or messages.startReply to stream';
    throw new ValidationError([{ field: 'stream', message }], context);
  }
  if (!('text' in input)) return { schema: AGENT_SEND_SCHEMA, ...input };
  if ('content' in input) {
    throw new ValidationError(
      [{ field: 'content', message: 'give either text or content, not both' }],
      context,
    );
  }
  const { text, fallbackText, replyToMessageId, metadata } = parseInput(SendTextInput, input, context);
  const content = [{ type: 'text', text }];
  return {
    schema: AGENT_SEND_SCHEMA,
    content,
    fallbackText: fallbackText ?? text,
    replyToMessageId,
    metadata,
  };
}
