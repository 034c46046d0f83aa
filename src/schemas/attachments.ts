import * as z from 'zod/mini';
import { HttpUrl, Timestamp, type Wire } from './common.js';

/** Largest attachment the service takes: 100 MiB (PROTOCOL.md section 9). */
export const MAX_ATTACHMENT_BYTES = 100 * 1024 * 1024;

/** `POST /v1/attachments` request. */
export const CreateAttachmentRequest = z.strictObject({
  name: z.string().check(z.minLength(1), z.maxLength(255)),
  // It becomes the Content-Type of the upload and the download: a header-safe value (RFC 9110 field
  // value, visible ASCII and spaces, no line break, no trailing space) or a header could be forged.
  mime_type: z.string().check(
    z.regex(/^[\w.+-]+\/[\w.+-]+(?:;[ \t\x21-\x7e]*[\x21-\x7e])?$/, {
      error: 'must be a MIME type such as "image/png", in visible ASCII',
    }),
  ),
  size_bytes: z.int().check(z.minimum(1), z.maximum(MAX_ATTACHMENT_BYTES)),
});
/** `POST /v1/attachments` request. */
export type CreateAttachmentRequest = z.input<typeof CreateAttachmentRequest>;

/** The upload handle; `attachments.upload` sends the bytes to its `upload_url`. */
export const Attachment = z.looseObject({
  attachment_id: z.string(),
  upload_url: HttpUrl,
  download_url: z.string(),
  expires_at: Timestamp,
});
/** The upload handle. */
export type Attachment = Wire<typeof Attachment>;
