// Replies beyond plain text: quick replies (an `actions` block of postbacks, layout quick_replies) and
// files (upload, then a file or image block). A file reply is exactly once across redeliveries:
// the attachment id of the n-th file reply of a webhook id is kept in the bot store before the send,
// so a retry sends the same body under the same derived Idempotency-Key (the service replays it)
// instead of uploading again and posting a second message.

import type { AgentClient } from '../client/agent-client.js';
import { ValidationError } from '../core/errors.js';
import type { UploadData } from '../resources/attachments.js';
import type { SendBlock } from '../schemas/messages.js';
import type { BotStore } from '../store/bot-store.js';
import { DEDUPE_RETENTION_MS } from './lanes.js';

/** One quick reply: a button whose click posts `label` and delivers `{ actionId, value }` back. */
export interface QuickReply {
  actionId: string;
  label: string;
  /** The value delivered with the click; `actionId` when absent. */
  value?: string;
}

/** Options of `ctx.replyWithFile`. */
export interface FileReplyOptions {
  /** The file's name as the user sees it. */
  name: string;
  /** Its MIME type; an `image/*` type is sent as an image block, anything else as a file block. */
  mime_type: string;
  /** Text sent above the file, in the same message. */
  caption?: string;
}

const nonEmpty = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/** The actions block of `quickReplies`; a ValidationError naming the field for bad input. @internal */
export function quickRepliesBlock(quickReplies: unknown, operation: string): SendBlock {
  if (!Array.isArray(quickReplies) || quickReplies.length === 0) {
    throw new ValidationError([{ field: 'quickReplies', message: 'must be a non-empty array' }], operation);
  }
  const actions = quickReplies.map((reply: Partial<QuickReply> | null, index) => {
    const field = `quickReplies[${index}]`;
    if (typeof reply !== 'object' || reply === null || !nonEmpty(reply.actionId) || !nonEmpty(reply.label)) {
      throw new ValidationError([{ field, message: 'must have a non-empty actionId and label' }], operation);
    }
    if (reply.value !== undefined && !nonEmpty(reply.value)) {
      throw new ValidationError(
        [{ field: `${field}.value`, message: 'must be a non-empty string' }],
        operation,
      );
    }
    const value = reply.value ?? reply.actionId;
    return { actionId: reply.actionId, label: reply.label, behavior: { type: 'postback' as const, value } };
  });
  // The shared schema checks the limits (10 actions, lengths) when the send is built.
  return { type: 'actions', layout: 'quick_replies', actions };
}

/** What a file reply needs. @internal */
export interface FileReplyDeps {
  client: AgentClient;
  store: BotStore;
  conversationId: string;
  idempotencyKey: string;
  replyToMessageId: string | undefined;
  signal: AbortSignal;
}

/** Uploads (once per key) and sends the file reply. @internal */
export async function sendFileReply(deps: FileReplyDeps, data: UploadData, options: FileReplyOptions) {
  const operation = 'ctx.replyWithFile';
  if (typeof options !== 'object' || options === null) {
    throw new ValidationError(
      [{ field: 'options', message: 'must be { name, mime_type, caption? }' }],
      operation,
    );
  }
  if (!nonEmpty(options.name))
    throw new ValidationError([{ field: 'name', message: 'must be a non-empty string' }], operation);
  if (!nonEmpty(options.mime_type)) {
    throw new ValidationError(
      [{ field: 'mime_type', message: 'must be a MIME type such as image/png' }],
      operation,
    );
  }
  if (options.caption !== undefined && typeof options.caption !== 'string') {
    throw new ValidationError([{ field: 'caption', message: 'must be a string' }], operation);
  }
  const remembered = `reply-file:${deps.idempotencyKey}`;
  let attachmentId = await deps.store.get(remembered);
  if (attachmentId === undefined) {
    const uploaded = await deps.client.attachments.upload(
      data,
      { name: options.name, mime_type: options.mime_type },
      { signal: deps.signal },
    );
    attachmentId = uploaded.attachment_id;
    await deps.store.set(remembered, attachmentId, DEDUPE_RETENTION_MS);
  }
  const type = options.mime_type.toLowerCase().startsWith('image/') ? 'image' : 'file';
  const content: SendBlock[] = [
    ...(options.caption ? [{ type: 'text' as const, text: options.caption }] : []),
    { type, attachmentId },
  ];
  const sent = await deps.client.messages.send(
    deps.conversationId,
    {
      content,
      fallbackText: options.caption || options.name,
      ...(deps.replyToMessageId === undefined ? {} : { replyToMessageId: deps.replyToMessageId }),
    },
    { idempotencyKey: deps.idempotencyKey },
  );
  return { message_id: sent.message.id, status: sent.message.status, attachment_id: attachmentId };
}
