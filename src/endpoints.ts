// Every endpoint of SPEC.md in one table, by key: the client's transport sends by it, the mock's
// routes register by it, and the tests name their `describe` after it. `grep 'messages.send'` finds
// the schema entry, the method, the mock rule and the test.

import type * as z from 'zod/mini';
import {
  RegisterAgentRequest,
  RegisterAgentResponse,
  SetWebhookRequest,
  SetWebhookResponse,
} from './schemas/agents.js';
import { Attachment, CreateAttachmentRequest } from './schemas/attachments.js';
import { AgentId, BlockId, ConversationId, InviteId, MessageId, type Wire } from './schemas/common.js';
import {
  CreateDirectRequest,
  CreateDirectResponse,
  ListMessagesQuery,
  ListMessagesResponse,
  ReadRequest,
  Receipt,
  ReceiptRequest,
  RetrieveConversationResponse,
  TypingRequest,
  TypingResponse,
} from './schemas/conversations.js';
import { AcceptInviteResponse, CreateInviteRequest, CreateInviteResponse } from './schemas/invites.js';
import {
  AppendRequest,
  AppendResponse,
  CompleteRequest,
  CompleteResponse,
  ReactionRequest,
  ReactionResponse,
  SendMessageRequest,
  SendMessageResponse,
  UnsendResponse,
} from './schemas/messages.js';

/** The HTTP methods the service uses. */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** Who may call an endpoint: an agent token, a user session, either, or no credential. */
export type CallerKind = 'agent' | 'user' | 'any' | 'none';

/**
 * Whether a failed call is tried again (the one vocabulary of client and mock):
 * `safe` - repeating it cannot do harm (reads, deletes, and what PROTOCOL.md makes idempotent);
 * `keyed` - it carries an `Idempotency-Key` (generated when none is given) that the service
 * deduplicates, so a repeat answers the first result; `never` - a repeat could act twice.
 */
export type RetryClass = 'safe' | 'keyed' | 'never';

/** One endpoint: where it is, who calls it, what goes in and out, and whether it may be repeated. */
export interface Endpoint {
  method: HttpMethod;
  /** The path with `:name` parameters, such as `/v1/messages/:message_id`. */
  path: string;
  caller: CallerKind;
  retry: RetryClass;
  /** The strict schema of the JSON body; absent when the endpoint takes none. */
  request?: z.ZodMiniType;
  /** The strict schema of the query; absent when the endpoint takes none. */
  query?: z.ZodMiniType;
  /** The (loose) schema of a 2xx JSON answer; absent for the file URLs. */
  response?: z.ZodMiniType;
}

/** The schema of each path parameter, by its name in the path templates. */
export const PATH_PARAMS: Readonly<Record<string, z.ZodMiniType<string>>> = {
  agent_id: AgentId,
  conversation_id: ConversationId,
  message_id: MessageId,
  block_id: BlockId,
  invite_id: InviteId,
};

/** The endpoints of SPEC.md (and the mock's file URLs, which SPEC leaves to the service), by key. */
export const endpoints = {
  'agents.register': {
    method: 'POST',
    path: '/v1/agents',
    caller: 'none',
    // Not deduplicated: a repeat after a lost answer meets handle_taken and loses the credentials.
    retry: 'never',
    request: RegisterAgentRequest,
    response: RegisterAgentResponse,
  },
  'agents.setWebhook': {
    method: 'PATCH',
    path: '/v1/agents/:agent_id/webhook',
    caller: 'agent',
    retry: 'never',
    request: SetWebhookRequest,
    response: SetWebhookResponse,
  },
  'attachments.create': {
    method: 'POST',
    path: '/v1/attachments',
    caller: 'agent',
    retry: 'never',
    request: CreateAttachmentRequest,
    response: Attachment,
  },
  'conversations.createDirect': {
    method: 'POST',
    path: '/v1/conversations/direct',
    caller: 'user',
    retry: 'keyed',
    request: CreateDirectRequest,
    response: CreateDirectResponse,
  },
  'conversations.retrieve': {
    method: 'GET',
    path: '/v1/conversations/:conversation_id',
    caller: 'agent',
    retry: 'safe',
    response: RetrieveConversationResponse,
  },
  'conversations.listMessages': {
    method: 'GET',
    path: '/v1/conversations/:conversation_id/messages',
    caller: 'agent',
    retry: 'safe',
    query: ListMessagesQuery,
    response: ListMessagesResponse,
  },
  'conversations.typing': {
    method: 'POST',
    path: '/v1/conversations/:conversation_id/typing',
    caller: 'agent',
    retry: 'safe',
    request: TypingRequest,
    response: TypingResponse,
  },
  'conversations.sendReceipt': {
    method: 'POST',
    path: '/v1/conversations/:conversation_id/receipts',
    caller: 'agent',
    retry: 'safe',
    request: ReceiptRequest,
    response: Receipt,
  },
  'conversations.markRead': {
    method: 'POST',
    path: '/v1/conversations/:conversation_id/read',
    caller: 'agent',
    retry: 'safe',
    request: ReadRequest,
    response: Receipt,
  },
  /** Both forms: `?stream=true` answers an event stream (read through `Transport.raw`). */
  'messages.send': {
    method: 'POST',
    path: '/v1/conversations/:conversation_id/messages',
    caller: 'agent',
    retry: 'keyed',
    request: SendMessageRequest,
    response: SendMessageResponse,
  },
  'messages.append': {
    method: 'POST',
    path: '/v1/messages/:message_id/blocks/:block_id/append',
    caller: 'agent',
    // A key on an append is not deduplicated by the service: a repeat would double the text.
    retry: 'never',
    request: AppendRequest,
    response: AppendResponse,
  },
  'messages.complete': {
    method: 'POST',
    path: '/v1/messages/:message_id/complete',
    caller: 'agent',
    retry: 'never',
    request: CompleteRequest,
    response: CompleteResponse,
  },
  'messages.react': {
    method: 'POST',
    path: '/v1/messages/:message_id/reactions',
    caller: 'agent',
    retry: 'safe',
    request: ReactionRequest,
    response: ReactionResponse,
  },
  /** A second unsend answers the tombstone, so a repeat is safe. */
  'messages.unsend': {
    method: 'DELETE',
    path: '/v1/messages/:message_id',
    caller: 'any',
    retry: 'safe',
    response: UnsendResponse,
  },
  'groups.invite': {
    method: 'POST',
    path: '/v1/groups/invites',
    caller: 'agent',
    retry: 'keyed',
    request: CreateInviteRequest,
    response: CreateInviteResponse,
  },
  /** A repeated acceptance is a no-op (PROTOCOL.md section 12). */
  'invites.accept': {
    method: 'POST',
    path: '/v1/groups/invites/:invite_id/accept',
    caller: 'user',
    retry: 'safe',
    response: AcceptInviteResponse,
  },
  /** The `upload_url` of a handle: raw bytes, no Authorization header (the URL is the grant). */
  'files.upload': {
    method: 'PUT',
    path: '/_files/upload/:attachment_id/:token',
    caller: 'none',
    retry: 'safe',
  },
  /** The `download_url` of a handle. */
  'files.download': {
    method: 'GET',
    path: '/_files/download/:attachment_id/:token',
    caller: 'none',
    retry: 'safe',
  },
} as const satisfies Record<string, Endpoint>;

/** The key of an endpoint, such as `messages.send`. */
export type EndpointKey = keyof typeof endpoints;

type Table = typeof endpoints;

/** The parsed 2xx answer of an endpoint. */
export type ResponseOf<K extends EndpointKey> = Table[K] extends { response: infer S extends z.ZodMiniType }
  ? Wire<S>
  : never;
