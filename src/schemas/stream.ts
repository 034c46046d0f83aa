import * as z from 'zod/mini';
import { BlockId, type Wire } from './common.js';
import { parseByType } from './issues.js';
import { AppendRequest, CompleteRequest, ResponseBlock } from './messages.js';

// ---- Events of the `text/event-stream` answer (PROTOCOL.md section 8) ----

const StreamEventBase = z.looseObject({
  schema: z.string(),
  eventId: z.string(),
  conversationId: z.string(),
  type: z.string(),
  seq: z.int(),
});

/** `message.started`: the streamed message exists, every block with its id. */
export const MessageStartedEvent = z.extend(StreamEventBase, {
  type: z.literal('message.started'),
  message: z.looseObject({ id: z.string(), content: z.array(ResponseBlock) }),
});
/** `message.started`: the streamed message exists, every block with its id. */
export type MessageStartedEvent = Wire<typeof MessageStartedEvent>;

/** The patch of a `message.patch` event. */
export const TextPatch = z.looseObject({
  op: z.string(),
  blockId: z.string(),
  path: z.string(),
  value: z.string(),
});
/** The patch of a `message.patch` event. */
export type TextPatch = Wire<typeof TextPatch>;

/** `message.patch`: text appended to a block. */
export const MessagePatchEvent = z.extend(StreamEventBase, {
  type: z.literal('message.patch'),
  messageId: z.string(),
  patch: TextPatch,
});
/** `message.patch`: text appended to a block. */
export type MessagePatchEvent = Wire<typeof MessagePatchEvent>;

/** `message.completed`: the message is complete; the stream ends. */
export const MessageCompletedEvent = z.extend(StreamEventBase, {
  type: z.literal('message.completed'),
  messageId: z.string(),
});
/** `message.completed`: the message is complete; the stream ends. */
export type MessageCompletedEvent = Wire<typeof MessageCompletedEvent>;

/**
 * An event of the stream. An event of a type this version does not know is passed through as it
 * came (its `type` is then none of these).
 */
export type StreamEvent = MessageStartedEvent | MessagePatchEvent | MessageCompletedEvent;

const streamEventSchemas = {
  'message.started': MessageStartedEvent,
  'message.patch': MessagePatchEvent,
  'message.completed': MessageCompletedEvent,
};

/** Checks one decoded `data:` object; unknown event types keep the base shape only. */
export const parseStreamEvent = (data: unknown) =>
  parseByType<StreamEvent>(streamEventSchemas, StreamEventBase, data);

// ---- Lines of the NDJSON request body (after the first line, the send shape) ----

/** A `message.patch` line of the streamed request body. */
export const PatchLine = z.strictObject({
  type: z.literal('message.patch'),
  patch: z.strictObject({ op: z.literal('appendText'), blockId: BlockId, ...AppendRequest.shape }),
});
/** A `message.patch` line of the streamed request body. */
export type PatchLine = z.input<typeof PatchLine>;

/** The `message.completed` line that ends the streamed request body. */
export const CompletedLine = z.strictObject({
  type: z.literal('message.completed'),
  fallbackText: CompleteRequest.shape.fallbackText,
});
/** The `message.completed` line that ends the streamed request body. */
export type CompletedLine = z.input<typeof CompletedLine>;

/** A line of the streamed body after the first. */
export const StreamBodyLine = z.discriminatedUnion('type', [PatchLine, CompletedLine]);
/** A line of the streamed body after the first. */
export type StreamBodyLine = z.input<typeof StreamBodyLine>;
