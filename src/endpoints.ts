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

type Schemas = Pick<Endpoint, 'request' | 'query' | 'response'>;

/** The schema of each path parameter, by its name in the path templates. */
export const PATH_PARAMS: Readonly<Record<string, z.ZodMiniType<string>>> = {
  agent_id: AgentId,
  conversation_id: ConversationId,
  message_id: MessageId,
  block_id: BlockId,
  invite_id: InviteId,
};

/** `METHOD /path`, caller and retry class, and the schemas of an endpoint, as one entry. */
function define<const C extends CallerKind, const S extends Schemas>(
  route: string,
  caller: C,
  retry: RetryClass,
  schemas: S,
) {
  const [method, path] = route.split(' ') as [HttpMethod, string];
  return { method, path, caller, retry, ...schemas };
}

/** The endpoints of SPEC.md (and the mock's file URLs, which SPEC leaves to the service), by key. */
export const endpoints = {
  // Not deduplicated: a repeat after a lost answer meets handle_taken and loses the credentials.
  'agents.register': define('POST /v1/agents', 'none', 'never', {
    request: RegisterAgentRequest,
    response: RegisterAgentResponse,
  }),
  'agents.setWebhook': define('PATCH /v1/agents/:agent_id/webhook', 'agent', 'never', {
    request: SetWebhookRequest,
    response: SetWebhookResponse,
  }),
  'attachments.create': define('POST /v1/attachments', 'agent', 'never', {
    request: CreateAttachmentRequest,
    response: Attachment,
  }),
  'conversations.createDirect': define('POST /v1/conversations/direct', 'user', 'keyed', {
    request: CreateDirectRequest,
    response: CreateDirectResponse,
  }),
  'conversations.retrieve': define('GET /v1/conversations/:conversation_id', 'agent', 'safe', {
    response: RetrieveConversationResponse,
  }),
  'conversations.listMessages': define('GET /v1/conversations/:conversation_id/messages', 'agent', 'safe', {
    query: ListMessagesQuery,
    response: ListMessagesResponse,
  }),
  'conversations.typing': define('POST /v1/conversations/:conversation_id/typing', 'agent', 'safe', {
    request: TypingRequest,
    response: TypingResponse,
  }),
  'conversations.sendReceipt': define('POST /v1/conversations/:conversation_id/receipts', 'agent', 'safe', {
    request: ReceiptRequest,
    response: Receipt,
  }),
  'conversations.markRead': define('POST /v1/conversations/:conversation_id/read', 'agent', 'safe', {
    request: ReadRequest,
    response: Receipt,
  }),
  /** Both forms: `?stream=true` answers an event stream (read through `Transport.raw`). */
  'messages.send': define('POST /v1/conversations/:conversation_id/messages', 'agent', 'keyed', {
    request: SendMessageRequest,
    response: SendMessageResponse,
  }),
  // A key on an append is not deduplicated by the service: a repeat would double the text.
  'messages.append': define('POST /v1/messages/:message_id/blocks/:block_id/append', 'agent', 'never', {
    request: AppendRequest,
    response: AppendResponse,
  }),
  'messages.complete': define('POST /v1/messages/:message_id/complete', 'agent', 'never', {
    request: CompleteRequest,
    response: CompleteResponse,
  }),
  'messages.react': define('POST /v1/messages/:message_id/reactions', 'agent', 'safe', {
    request: ReactionRequest,
    response: ReactionResponse,
  }),
  /** A second unsend answers the tombstone, so a repeat is safe. */
  'messages.unsend': define('DELETE /v1/messages/:message_id', 'any', 'safe', { response: UnsendResponse }),
  'groups.invite': define('POST /v1/groups/invites', 'agent', 'keyed', {
    request: CreateInviteRequest,
    response: CreateInviteResponse,
  }),
  /** A repeated acceptance is a no-op (PROTOCOL.md section 12). */
  'invites.accept': define('POST /v1/groups/invites/:invite_id/accept', 'user', 'safe', {
    response: AcceptInviteResponse,
  }),
  /** The `upload_url` of a handle: raw bytes, no Authorization header (the URL is the grant). */
  'files.upload': define('PUT /_files/upload/:attachment_id/:token', 'none', 'safe', {}),
  /** The `download_url` of a handle. */
  'files.download': define('GET /_files/download/:attachment_id/:token', 'none', 'safe', {}),
} as const satisfies Record<string, Endpoint>;

/** The key of an endpoint, such as `messages.send`. */
export type EndpointKey = keyof typeof endpoints;

type Table = typeof endpoints;

/** The parsed 2xx answer of an endpoint. */
export type ResponseOf<K extends EndpointKey> = Table[K] extends { response: infer S extends z.ZodMiniType }
  ? Wire<S>
  : never;
