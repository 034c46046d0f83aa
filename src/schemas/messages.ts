import * as z from 'zod';
import { AGENT_SEND_SCHEMA, AttachmentId, BlockId, MessageId, openEnum, Timestamp } from './common.js';

/** Most text one message may hold, summed over its blocks (PROTOCOL.md section 7). */
export const MAX_MESSAGE_TEXT = 32_000;
export const MAX_BLOCKS = 50;
export const MAX_ACTIONS = 10;

// ---- The send shape (camelCase, strict) ----

export const TextBlock = z.strictObject({
  type: z.literal('text'),
  text: z.string().max(MAX_MESSAGE_TEXT),
  id: BlockId.optional(),
});

export const PostbackBehavior = z.strictObject({
  type: z.literal('postback'),
  value: z.string().min(1).max(1000),
});

export const Action = z.strictObject({
  actionId: z.string().min(1).max(100),
  label: z.string().min(1).max(100),
  behavior: PostbackBehavior,
});
export type Action = z.input<typeof Action>;

export const ActionsBlock = z.strictObject({
  type: z.literal('actions'),
  layout: z.literal('quick_replies'),
  actions: z.array(Action).min(1).max(MAX_ACTIONS),
  id: BlockId.optional(),
});

export const FileBlock = z.strictObject({
  type: z.literal('file'),
  attachmentId: AttachmentId,
  id: BlockId.optional(),
});

export const ImageBlock = z.strictObject({
  type: z.literal('image'),
  attachmentId: AttachmentId,
  id: BlockId.optional(),
});

/** A content block of the send shape. */
export const SendBlock = z.discriminatedUnion('type', [TextBlock, ActionsBlock, FileBlock, ImageBlock]);
export type SendBlock = z.input<typeof SendBlock>;

const withinTextLimit = (content: readonly SendBlock[]) =>
  content.reduce((sum, block) => sum + (block.type === 'text' ? block.text.length : 0), 0) <=
  MAX_MESSAGE_TEXT;

/** The send shape of `POST /v1/conversations/{id}/messages` (both forms). */
export const SendMessageRequest = z.strictObject({
  schema: z.literal(AGENT_SEND_SCHEMA),
  content: z
    .array(SendBlock)
    .max(MAX_BLOCKS)
    .refine(withinTextLimit, { error: `text must total at most ${MAX_MESSAGE_TEXT} characters` }),
  fallbackText: z.string().max(MAX_MESSAGE_TEXT).optional(),
  replyToMessageId: MessageId.optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  stream: z.literal(true).optional(),
});
export type SendMessageRequest = z.input<typeof SendMessageRequest>;

export const MessageStatus = openEnum(['sent', 'streaming', 'deleted']);

/** A content block as the service answers it: always with its `id`. */
export const ResponseBlock = z.looseObject({
  id: z.string(),
  type: z.string(),
  text: z.string().optional(),
});
export type ResponseBlock = z.output<typeof ResponseBlock>;

/** `{ message: { id, conversationId, status, content } }`, the send response. */
export const SendMessageResponse = z.looseObject({
  message: z.looseObject({
    id: z.string(),
    conversationId: z.string(),
    status: MessageStatus,
    content: z.array(ResponseBlock),
  }),
});
export type SendMessageResponse = z.output<typeof SendMessageResponse>;

// ---- The history shape (snake_case, loose) ----

export const MessagePart = z.looseObject({
  part_index: z.int(),
  type: z.string(),
  text: z.string().optional(),
  attachment_id: z.string().optional(),
  actions: z.array(z.looseObject({})).optional(),
});
export type MessagePart = z.output<typeof MessagePart>;

export const Sender = z.looseObject({ id: z.string() });

export const Reaction = z.looseObject({ part_index: z.int(), emoji: z.string(), actor_id: z.string() });

/** A message in history, in a conversation, and in `message.received`. */
export const Message = z.looseObject({
  id: z.string(),
  conversation_id: z.string(),
  sequence: z.int(),
  sender: Sender,
  parts: z.array(MessagePart).optional(),
  fallback_text: z.string().nullish(),
  status: MessageStatus,
  created_at: Timestamp,
  reply_to: z.looseObject({ message_id: z.string(), part_index: z.int() }).nullish(),
  invoked_agents: z.array(z.string()).optional(),
  suggestions: z.array(z.looseObject({ text: z.string() })).optional(),
  reactions: z.array(Reaction).optional(),
  delivered_at: Timestamp.nullish(),
  read_at: Timestamp.nullish(),
  edited_at: Timestamp.nullish(),
  revisions: z
    .array(
      z.looseObject({
        parts: z.array(MessagePart),
        fallback_text: z.string().nullish(),
        replaced_at: Timestamp,
      }),
    )
    .optional(),
  revision: z.int().optional(),
});
export type Message = z.output<typeof Message>;

/** `DELETE /v1/messages/{id}` response: the tombstone. */
export const UnsendResponse = z.looseObject({
  message: z.looseObject({
    id: z.string(),
    conversation_id: z.string(),
    sequence: z.int(),
    sender: Sender,
    status: MessageStatus,
    created_at: Timestamp,
  }),
});
export type UnsendResponse = z.output<typeof UnsendResponse>;

// ---- Append, complete, reactions ----

export const AppendRequest = z.strictObject({
  path: z.literal('/text'),
  value: z.string().max(MAX_MESSAGE_TEXT),
});
export type AppendRequest = z.input<typeof AppendRequest>;

export const AppendResponse = z.looseObject({
  message_id: z.string(),
  block_id: z.string(),
  revision: z.int(),
});
export type AppendResponse = z.output<typeof AppendResponse>;

export const CompleteRequest = z.strictObject({
  status: z.literal('sent'),
  fallbackText: z.string().max(MAX_MESSAGE_TEXT).optional(),
});
export type CompleteRequest = z.input<typeof CompleteRequest>;

export const CompleteResponse = z.looseObject({
  message_id: z.string(),
  status: MessageStatus,
  revision: z.int(),
});
export type CompleteResponse = z.output<typeof CompleteResponse>;

export const ReactionRequest = z.strictObject({
  emoji: z.string().min(1).max(16),
  action: z.enum(['add', 'remove']),
});
export type ReactionRequest = z.input<typeof ReactionRequest>;

export const ReactionResponse = z.looseObject({
  message_id: z.string(),
  emoji: z.string(),
  action: z.string(),
  at: Timestamp,
});
export type ReactionResponse = z.output<typeof ReactionResponse>;
