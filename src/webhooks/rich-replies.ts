// Replies beyond plain text: quick replies (an `actions` block of postbacks, layout quick_replies) and
// files (upload, then a file or image block). A file reply is exactly once across redeliveries:
// the attachment id of the n-th file reply of a webhook id is kept in the bot store before the send,
// so a retry sends the same body under the same derived Idempotency-Key (the service replays it)
// instead of uploading again and posting a second message.

import * as z from 'zod/mini';
import type { AgentClient } from '../client/agent-client.js';
import { parseInput, text } from '../core/validate.js';
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

/**
 * What `quickReplies` must be: a non-empty array of buttons with an actionId and a label; the shared
 * schema checks the limits (10 actions, lengths) when the send is built. A function, so an app that
 * imports only the client bundles none of it. @internal
 */
export const quickRepliesSchema = () =>
  z
    .array(
      // A bad actionId or label names the button, a bad value the value.
      z.looseObject({ value: z.optional(text()) }).check(
        z.refine((reply) => nonEmpty(reply.actionId) && nonEmpty(reply.label), {
          error: 'must have a non-empty actionId and label',
        }),
      ),
    )
    .check(z.minLength(1, { error: 'must be a non-empty array' }));

const nonEmpty = (value: unknown) => typeof value === 'string' && value.trim() !== '';

/** The actions block of quick replies checked with {@link quickRepliesSchema}. @internal */
export const quickRepliesBlock = (quickReplies: readonly QuickReply[]): SendBlock => ({
  type: 'actions',
  layout: 'quick_replies',
  actions: quickReplies.map(({ actionId, label, value }) => ({
    actionId,
    label,
    behavior: { type: 'postback' as const, value: value ?? actionId },
  })),
});

/** What `ctx.replyWithFile` checks of its options (made per call: a file reply is rare). */
const fileReplyOptionsSchema = () =>
  z.object({
    name: text(),
    mime_type: z.string().check(z.regex(/\S/, { error: 'must be a MIME type such as image/png' })),
    caption: z.optional(z.string()),
  });

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
  parseInput(fileReplyOptionsSchema(), options, 'ctx.replyWithFile');
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
