// The `schemas` export of `agent-messaging`: the zod schema of each wire shape, by the name of its type
// (`schemas.Message` checks a `Message`). The building blocks beside them (ids, limits, open enums,
// issue wording) are the SDK's own and are imported from their modules.
export {
  Agent,
  RegisterAgentRequest,
  RegisterAgentResponse,
  SetWebhookRequest,
  SetWebhookResponse,
} from './agents.js';
export { Attachment, CreateAttachmentRequest } from './attachments.js';
export {
  AgentConversation,
  Conversation,
  CreateDirectRequest,
  CreateDirectResponse,
  ListMessagesQuery,
  ListMessagesResponse,
  Participant,
  ReadRequest,
  Receipt,
  ReceiptRequest,
  RetrieveConversationResponse,
  TypingRequest,
  TypingResponse,
} from './conversations.js';
export { ErrorBody, ErrorCode } from './errors.js';
export { AcceptInviteResponse, CreateInviteRequest, CreateInviteResponse, GroupInvite } from './invites.js';
export {
  Action,
  AppendRequest,
  AppendResponse,
  CompleteRequest,
  CompleteResponse,
  Message,
  MessagePart,
  ReactionRequest,
  ReactionResponse,
  ResponseBlock,
  SendBlock,
  SendMessageRequest,
  SendMessageResponse,
  UnsendResponse,
} from './messages.js';
export { MessageCompletedEvent, MessagePatchEvent, MessageStartedEvent, TextPatch } from './stream.js';
export {
  InviteCompletedEvent,
  InviteExpiredEvent,
  MessageReceivedEvent,
  WebhookTestEvent,
} from './webhooks.js';
