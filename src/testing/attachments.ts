// Attachments (PROTOCOL.md section 9): an upload handle valid 15 minutes, then PUT the bytes and
// GET them back. The file URLs are absolute, built from the origin of the request that created the
// handle (so they work through either door), and take no Authorization header.
import * as z from 'zod/mini';
import { CreateAttachmentRequest, MAX_ATTACHMENT_BYTES } from '../schemas/attachments.js';
import { requireActive } from './access.js';
import { invalid, json, MockError, mediaType, notFound } from './http.js';
import { newId, newToken } from './ids.js';
import { attachmentUpdated } from './live-feed.js';
import { endpoint, type RouteContext } from './router.js';
import type { AttachmentRecord } from './state.js';

/** How long an upload handle stays valid. */
const UPLOAD_TTL_MS = 15 * 60 * 1000;

// The shared schema caps size_bytes at 100 MiB (the SDK refuses more before sending), but the service
// answers an attachment over 100 MiB with 413, not 400 (PROTOCOL.md section 2): the rule reads the
// size uncapped and checks the cap itself, as a limit, before permission (403).
const CreateAttachmentBody = z.extend(CreateAttachmentRequest, { size_bytes: z.int().check(z.minimum(1)) });

/** `POST /v1/attachments`: an upload handle; 413 for a file over 100 MiB. */
export const createAttachment = endpoint('attachments.create', {
  body: CreateAttachmentBody,
  handle: (ctx) => {
    const { agent } = ctx.caller;
    if (ctx.body.size_bytes > MAX_ATTACHMENT_BYTES) {
      throw new MockError(
        413,
        'payload_too_large',
        `size_bytes: ${ctx.body.size_bytes} is over the ${MAX_ATTACHMENT_BYTES} bytes (100 MiB) an attachment may have`,
      );
    }
    requireActive(agent);
    const attachment: AttachmentRecord = {
      id: newId('att'),
      agent_id: agent.id,
      ...ctx.body,
      expires_at: new Date(ctx.world.clock.nowMs() + UPLOAD_TTL_MS),
      upload_token: newToken(),
      download_token: newToken(),
      bytes: null,
    };
    ctx.world.state.attachments.set(attachment.id, attachment);
    attachmentUpdated(ctx.world, attachment);
    return json(201, {
      attachment_id: attachment.id,
      upload_url: `${ctx.request.url.origin}/_files/upload/${attachment.id}/${attachment.upload_token}`,
      download_url: `${ctx.request.url.origin}/_files/download/${attachment.id}/${attachment.download_token}`,
      expires_at: attachment.expires_at.toISOString(),
    });
  },
});

function findAttachment(ctx: RouteContext, kind: 'upload_token' | 'download_token'): AttachmentRecord {
  const attachment = ctx.world.state.attachments.get(ctx.params.attachment_id ?? '');
  // A wrong token is answered like an unknown file: the URL is the credential.
  if (!attachment || attachment[kind] !== ctx.params.token) throw notFound('file');
  return attachment;
}

/** `PUT {upload_url}`: 200 when the size matches, 400 otherwise (the handle stays usable), 410 when expired. */
export const uploadFile = endpoint('files.upload', {
  handle: async (ctx) => {
    const attachment = findAttachment(ctx, 'upload_token');
    if (ctx.world.clock.nowMs() >= attachment.expires_at.getTime()) {
      throw new MockError(
        410,
        'attachment_expired',
        `upload handle ${attachment.id} expired at ${attachment.expires_at.toISOString()}`,
      );
    }
    const sent = mediaType(ctx.request.headers.get('content-type'));
    if (sent !== mediaType(attachment.mime_type)) {
      throw invalid(
        `content-type: must be the declared mime_type "${attachment.mime_type}", got "${sent ?? ''}"`,
      );
    }
    const bytes = new Uint8Array(await new Response(ctx.request.body as BodyInit | null).arrayBuffer());
    if (bytes.byteLength > MAX_ATTACHMENT_BYTES) {
      throw new MockError(413, 'payload_too_large', `body: larger than ${MAX_ATTACHMENT_BYTES} bytes`);
    }
    if (bytes.byteLength !== attachment.size_bytes) {
      throw invalid(`body: is ${bytes.byteLength} bytes, but size_bytes declared ${attachment.size_bytes}`);
    }
    attachment.bytes = bytes;
    attachmentUpdated(ctx.world, attachment);
    return json(200, { attachment_id: attachment.id, size_bytes: bytes.byteLength });
  },
});

/** `GET {download_url}`: the bytes with the declared type, once uploaded. */
export const downloadFile = endpoint('files.download', {
  handle: (ctx) => {
    const attachment = findAttachment(ctx, 'download_token');
    return fileResponse(attachment.id, attachment);
  },
});

/** The uploaded bytes with the declared type, as a download named after the file; 404 before the upload. */
export function fileResponse(id: string, attachment: AttachmentRecord | undefined): Response {
  const bytes = attachment?.bytes;
  if (!attachment || !bytes) throw notFound(`file ${id} (unknown, or not uploaded yet)`);
  return new Response(bytes.slice(), {
    status: 200,
    headers: {
      'content-type': attachment.mime_type,
      'content-length': String(bytes.byteLength),
      'content-disposition': contentDisposition(attachment.name),
    },
  });
}

/**
 * `attachment` named after the file as RFC 6266 says: an ASCII `filename` for old clients and, when
 * that is not the exact name, the name UTF-8 percent-encoded in `filename*`. A header holds only
 * bytes up to 0xFF, so the raw name of `résumé 日本.txt` cannot go in it (the Response would throw).
 */
function contentDisposition(name: string): string {
  const ascii = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]|["\\]/g, '_');
  // A lone surrogate (valid in JSON) would make encodeURIComponent throw: it becomes U+FFFD. And
  // encodeURIComponent leaves ' ( ) * as they are, which RFC 8187's attr-char does not allow.
  const encoded = encodeURIComponent(name.replace(/[\uD800-\uDFFF]/gu, '\uFFFD')).replace(
    /['()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  // A plain name needs no second form.
  if (ascii === name) return `attachment; filename="${name}"`;
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
