import * as z from 'zod';
import { MessageId, openEnum, Timestamp, UserId } from './common.js';
import { Message } from './messages.js';

export const CounterpartUser = z.looseObject({
  id: z.string(),
  display_name: z.string(),
  avatar_url: z.string().nullish(),
});

/** `GET /v1/conversations/{id}`: the agent read shape. */
export const AgentConversation = z.looseObject({
  id: z.string(),
  title: z.string().nullish(),
  counterpart_user: CounterpartUser.nullish(),
  participant_count: z.int(),
  last_sequence: z.int(),
  last_message_at: Timestamp.nullish(),
  created_at: Timestamp,
});
export type AgentConversation = z.output<typeof AgentConversation>;

export const RetrieveConversationResponse = z.looseObject({ conversation: AgentConversation });
export type RetrieveConversationResponse = z.output<typeof RetrieveConversationResponse>;

export const ConversationKind = openEnum(['direct', 'agent', 'group']);

export const Participant = z.looseObject({
  id: z.string(),
  kind: openEnum(['user', 'agent']),
  display_name: z.string(),
  active: z.boolean(),
});
export type Participant = z.output<typeof Participant>;

/** The direct-conversation shape. */
export const Conversation = z.looseObject({
  id: z.string(),
  kind: ConversationKind,
  title: z.string().nullish(),
  avatar_url: z.string().nullish(),
  membership_version: z.int(),
  participants: z.array(Participant),
  contact_id: z.string().nullish(),
  counterpart_user: CounterpartUser.nullish(),
  created_at: Timestamp,
  last_message_at: Timestamp.nullish(),
  last_message_preview: z.string().nullish(),
  last_sequence: z.int(),
  unread: z.int(),
  messages: z.array(Message),
});
export type Conversation = z.output<typeof Conversation>;

/** `POST /v1/conversations/direct` request. */
export const CreateDirectRequest = z.strictObject({ user_id: UserId });
export type CreateDirectRequest = z.input<typeof CreateDirectRequest>;

export const CreateDirectResponse = z.looseObject({ conversation: Conversation });
export type CreateDirectResponse = z.output<typeof CreateDirectResponse>;

/** Query of `GET /v1/conversations/{id}/messages`. */
export const ListMessagesQuery = z.strictObject({
  limit: z.int().min(1).max(100).optional(),
  before_sequence: z.int().min(1).optional(),
});
export type ListMessagesQuery = z.input<typeof ListMessagesQuery>;

export const ListMessagesResponse = z.looseObject({ messages: z.array(Message) });
export type ListMessagesResponse = z.output<typeof ListMessagesResponse>;

export const TypingRequest = z.strictObject({ state: z.enum(['start', 'stop']) });
export type TypingRequest = z.input<typeof TypingRequest>;

export const TypingResponse = z.looseObject({
  conversation_id: z.string(),
  state: z.string(),
  expires_at: Timestamp,
});
export type TypingResponse = z.output<typeof TypingResponse>;

export const ReceiptRequest = z.strictObject({
  message_id: MessageId,
  type: z.enum(['delivered', 'read']),
});
export type ReceiptRequest = z.input<typeof ReceiptRequest>;

export const ReadRequest = z.strictObject({ message_id: MessageId });
export type ReadRequest = z.input<typeof ReadRequest>;

/** The answer of receipts and read. */
export const Receipt = z.looseObject({
  message_id: z.string(),
  type: openEnum(['delivered', 'read']),
  at: Timestamp,
});
export type Receipt = z.output<typeof Receipt>;
