import * as z from 'zod/mini';
import { MessageId, openEnum, Timestamp, UserId, type Wire } from './common.js';
import { Message } from './messages.js';

/** The other user of a conversation. */
export const CounterpartUser = z.looseObject({
  id: z.string(),
  display_name: z.string(),
  avatar_url: z.nullish(z.string()),
});

/** `GET /v1/conversations/{id}`: the agent read shape. */
export const AgentConversation = z.looseObject({
  id: z.string(),
  title: z.nullish(z.string()),
  counterpart_user: z.nullish(CounterpartUser),
  participant_count: z.int(),
  last_sequence: z.int(),
  last_message_at: z.nullish(Timestamp),
  created_at: Timestamp,
});
/** `GET /v1/conversations/{id}`: the agent read shape. */
export type AgentConversation = Wire<typeof AgentConversation>;

/** `GET /v1/conversations/{id}` response. */
export const RetrieveConversationResponse = z.looseObject({ conversation: AgentConversation });
/** `GET /v1/conversations/{id}` response. */
export type RetrieveConversationResponse = Wire<typeof RetrieveConversationResponse>;

/** `kind` of a conversation. */
export const ConversationKind = openEnum(['direct', 'agent', 'group']);

/** A participant of a conversation. */
export const Participant = z.looseObject({
  id: z.string(),
  kind: openEnum(['user', 'agent']),
  display_name: z.string(),
  active: z.boolean(),
});
/** A participant of a conversation. */
export type Participant = Wire<typeof Participant>;

/** The direct-conversation shape. */
export const Conversation = z.looseObject({
  id: z.string(),
  kind: ConversationKind,
  title: z.nullish(z.string()),
  avatar_url: z.nullish(z.string()),
  membership_version: z.int(),
  participants: z.array(Participant),
  contact_id: z.nullish(z.string()),
  counterpart_user: z.nullish(CounterpartUser),
  created_at: Timestamp,
  last_message_at: z.nullish(Timestamp),
  last_message_preview: z.nullish(z.string()),
  last_sequence: z.int(),
  unread: z.int(),
  messages: z.array(Message),
});
/** The direct-conversation shape. */
export type Conversation = Wire<typeof Conversation>;

/** `POST /v1/conversations/direct` request. */
export const CreateDirectRequest = z.strictObject({ user_id: UserId });
/** `POST /v1/conversations/direct` request. */
export type CreateDirectRequest = z.input<typeof CreateDirectRequest>;

/** `POST /v1/conversations/direct` response. */
export const CreateDirectResponse = z.looseObject({ conversation: Conversation });
/** `POST /v1/conversations/direct` response. */
export type CreateDirectResponse = Wire<typeof CreateDirectResponse>;

/** Query of `GET /v1/conversations/{id}/messages`. */
export const ListMessagesQuery = z.strictObject({
  limit: z.optional(z.int().check(z.minimum(1), z.maximum(100))),
  before_sequence: z.optional(z.int().check(z.minimum(1))),
});
/** Query of `GET /v1/conversations/{id}/messages`. */
export type ListMessagesQuery = z.input<typeof ListMessagesQuery>;

/** `GET /v1/conversations/{id}/messages` response: newest first. */
export const ListMessagesResponse = z.looseObject({ messages: z.array(Message) });
/** `GET /v1/conversations/{id}/messages` response: newest first. */
export type ListMessagesResponse = Wire<typeof ListMessagesResponse>;

/** `POST /v1/conversations/{id}/typing` request. */
export const TypingRequest = z.strictObject({ state: z.enum(['start', 'stop']) });
/** `POST /v1/conversations/{id}/typing` request. */
export type TypingRequest = z.input<typeof TypingRequest>;

/** `POST /v1/conversations/{id}/typing` response. */
export const TypingResponse = z.looseObject({
  conversation_id: z.string(),
  state: z.string(),
  expires_at: Timestamp,
});
/** `POST /v1/conversations/{id}/typing` response. */
export type TypingResponse = Wire<typeof TypingResponse>;

/** `POST /v1/conversations/{id}/receipts` request. */
export const ReceiptRequest = z.strictObject({
  message_id: MessageId,
  type: z.enum(['delivered', 'read']),
});
/** `POST /v1/conversations/{id}/receipts` request. */
export type ReceiptRequest = z.input<typeof ReceiptRequest>;

/** `POST /v1/conversations/{id}/read` request. */
export const ReadRequest = z.strictObject({ message_id: MessageId });
/** `POST /v1/conversations/{id}/read` request. */
export type ReadRequest = z.input<typeof ReadRequest>;

/** The answer of receipts and read. */
export const Receipt = z.looseObject({
  message_id: z.string(),
  type: openEnum(['delivered', 'read']),
  at: Timestamp,
});
/** The answer of receipts and read. */
export type Receipt = Wire<typeof Receipt>;
