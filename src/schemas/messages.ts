import * as z from 'zod/mini';
import {
  AGENT_SEND_SCHEMA,
  AttachmentId,
  BlockId,
  ContentType,
  MessageId,
  openEnum,
  Timestamp,
  type Wire,
} from './common.js';

/** Most text one message may hold, summed over its blocks (PROTOCOL.md section 7). */
export const MAX_MESSAGE_TEXT = 32_000;
/** Most blocks one message may hold. */
export const MAX_BLOCKS = 50;
/** Most actions one actions block may hold. */
export const MAX_ACTIONS = 10;

// ---- The send shape (camelCase, strict) ----

/** A text block of the send shape. */
export const TextBlock = z.strictObject({
  type: z.literal('text'),
  text: z.string().check(z.maxLength(MAX_MESSAGE_TEXT)),
  id: z.optional(BlockId),
});

/** What a quick reply does: post its value back. */
export const PostbackBehavior = z.strictObject({
  type: z.literal('postback'),
  value: z.string().check(z.minLength(1), z.maxLength(1000)),
});

/** One action of an actions block. */
export const Action = z.strictObject({
  actionId: z.string().check(z.minLength(1), z.maxLength(100)),
  label: z.string().check(z.minLength(1), z.maxLength(100)),
  behavior: PostbackBehavior,
});
/** One action of an actions block. */
export type Action = z.input<typeof Action>;

/** An actions block (quick replies) of the send shape. */
export const ActionsBlock = z.strictObject({
  type: z.literal('actions'),
  layout: z.literal('quick_replies'),
  actions: z.array(Action).check(z.minLength(1), z.maxLength(MAX_ACTIONS)),
  id: z.optional(BlockId),
});

const attachmentBlock = <T extends 'file' | 'image'>(type: T) =>
  z.strictObject({ type: z.literal(type), attachmentId: AttachmentId, id: z.optional(BlockId) });

/** A file block of the send shape: an uploaded attachment. */
export const FileBlock = attachmentBlock('file');

/** An image block of the send shape: an uploaded attachment. */
export const ImageBlock = attachmentBlock('image');

/** A content block of the send shape. */
export const SendBlock = z.discriminatedUnion('type', [TextBlock, ActionsBlock, FileBlock, ImageBlock]);
/** A content block of the send shape. */
export type SendBlock = z.input<typeof SendBlock>;

const withinTextLimit = (content: readonly SendBlock[]) =>
  content.reduce((sum, block) => sum + (block.type === 'text' ? block.text.length : 0), 0) <=
  MAX_MESSAGE_TEXT;

/** The send shape of `POST /v1/conversations/{id}/messages` (both forms). */
export const SendMessageRequest = z.strictObject({
  schema: z.literal(AGENT_SEND_SCHEMA),
  content: z
    .array(SendBlock)
    .check(
      z.maxLength(MAX_BLOCKS),
      z.refine(withinTextLimit, { error: `text must total at most ${MAX_MESSAGE_TEXT} characters` }),
    ),
  fallbackText: z.optional(z.string().check(z.maxLength(MAX_MESSAGE_TEXT))),
  replyToMessageId: z.optional(MessageId),
  metadata: z.optional(z.record(z.string(), z.unknown())),
  stream: z.optional(z.literal(true)),
});
/** The send shape of `POST /v1/conversations/{id}/messages` (both forms). */
export type SendMessageRequest = z.input<typeof SendMessageRequest>;

/** `status` of a message. */
export const MessageStatus = openEnum(['sent', 'streaming', 'deleted']);

/** A content block as the service answers it: always with its `id`. */
export const ResponseBlock = z.looseObject({
  id: z.string(),
  type: ContentType,
  text: z.optional(z.string()),
});
/** A content block as the service answers it: always with its `id`. */
export type ResponseBlock = Wire<typeof ResponseBlock>;

/** `{ message: { id, conversationId, status, content } }`, the send response. */
export const SendMessageResponse = z.looseObject({
  message: z.looseObject({
    id: z.string(),
    conversationId: z.string(),
    status: MessageStatus,
    content: z.array(ResponseBlock),
  }),
});
/** `{ message: { id, conversationId, status, content } }`, the send response. */
export type SendMessageResponse = Wire<typeof SendMessageResponse>;

// ---- The history shape (snake_case, loose) ----

/** A part of a message in history: text, an attachment, or actions. */
export const MessagePart = z.looseObject({
  part_index: z.int(),
  type: ContentType,
  text: z.optional(z.string()),
  attachment_id: z.optional(z.string()),
  actions: z.optional(z.array(z.looseObject({}))),
});
/** A part of a message in history: text, an attachment, or actions. */
export type MessagePart = Wire<typeof MessagePart>;

/** Who sent a message. */
export const Sender = z.looseObject({ id: z.string() });

/** A reaction on a message. */
export const Reaction = z.looseObject({ part_index: z.int(), emoji: z.string(), actor_id: z.string() });

/** A message in history, in a conversation, and in `message.received`. */
export const Message = z.looseObject({
  id: z.string(),
  conversation_id: z.string(),
  sequence: z.int(),
  sender: Sender,
  parts: z.optional(z.array(MessagePart)),
  fallback_text: z.nullish(z.string()),
  status: MessageStatus,
  created_at: Timestamp,
  reply_to: z.nullish(z.looseObject({ message_id: z.string(), part_index: z.int() })),
  invoked_agents: z.optional(z.array(z.string())),
  suggestions: z.optional(z.array(z.looseObject({ text: z.string() }))),
  reactions: z.optional(z.array(Reaction)),
  delivered_at: z.nullish(Timestamp),
  read_at: z.nullish(Timestamp),
  edited_at: z.nullish(Timestamp),
  revisions: z.optional(
    z.array(
      z.looseObject({
        parts: z.array(MessagePart),
        fallback_text: z.nullish(z.string()),
        replaced_at: Timestamp,
      }),
    ),
  ),
  revision: z.optional(z.int()),
});
/** A message in history, in a conversation, and in `message.received`. */
export type Message = Wire<typeof Message>;

/** `DELETE /v1/messages/{id}` response: the tombstone. */
export const UnsendResponse = z.looseObject({
  message: z.pick(Message, {
    id: true,
    conversation_id: true,
    sequence: true,
    sender: true,
    status: true,
    created_at: true,
  }),
});
/** `DELETE /v1/messages/{id}` response: the tombstone. */
export type UnsendResponse = Wire<typeof UnsendResponse>;

// ---- Append, complete, reactions ----

/** `POST /v1/messages/{id}/blocks/{blk}/append` request. */
export const AppendRequest = z.strictObject({
  path: z.literal('/text'),
  value: z.string().check(z.maxLength(MAX_MESSAGE_TEXT)),
});
/** `POST /v1/messages/{id}/blocks/{blk}/append` request. */
export type AppendRequest = z.input<typeof AppendRequest>;

/** `POST /v1/messages/{id}/blocks/{blk}/append` response. */
export const AppendResponse = z.looseObject({
  message_id: z.string(),
  block_id: z.string(),
  revision: z.int(),
});
/** `POST /v1/messages/{id}/blocks/{blk}/append` response. */
export type AppendResponse = Wire<typeof AppendResponse>;

/** `POST /v1/messages/{id}/complete` request. */
export const CompleteRequest = z.strictObject({
  status: z.literal('sent'),
  fallbackText: z.optional(z.string().check(z.maxLength(MAX_MESSAGE_TEXT))),
});
/** `POST /v1/messages/{id}/complete` request. */
export type CompleteRequest = z.input<typeof CompleteRequest>;

/** `POST /v1/messages/{id}/complete` response. */
export const CompleteResponse = z.looseObject({
  message_id: z.string(),
  status: MessageStatus,
  revision: z.int(),
});
/** `POST /v1/messages/{id}/complete` response. */
export type CompleteResponse = Wire<typeof CompleteResponse>;

/** `POST /v1/messages/{id}/reactions` request. */
export const ReactionRequest = z.strictObject({
  emoji: z.string().check(z.minLength(1), z.maxLength(16)),
  action: z.enum(['add', 'remove']),
});
/** `POST /v1/messages/{id}/reactions` request. */
export type ReactionRequest = z.input<typeof ReactionRequest>;

/** `POST /v1/messages/{id}/reactions` response. */
export const ReactionResponse = z.looseObject({
  message_id: z.string(),
  emoji: z.string(),
  action: z.string(),
  at: Timestamp,
});
/** `POST /v1/messages/{id}/reactions` response. */
export type ReactionResponse = Wire<typeof ReactionResponse>;
