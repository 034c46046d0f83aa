// Run: `npm run mock` in one terminal, then `npx tsx examples/upload-file.ts [path]` (this file by default).
// (On the real service: AMS_BASE_URL, AMS_API_KEY and AMS_CONVERSATION_ID.)
//
// Sends a file into a conversation. Files never travel inside message JSON: `attachments.upload`
// creates an upload handle and PUTs the bytes to its URL (reporting progress), and the message then
// references the handle's `attachment_id` in a file block.

import { openAsBlob } from 'node:fs';
import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentClient, type Attachment, type SendMessageResponse, type UploadProgress } from 'agent-messaging';
import { devAgentOnMock } from './support/try-on-mock.js';

/**
 * Uploads a file, then sends it with a caption; resolves with the upload handle and the message.
 * The Blob's `type` is the MIME type the service stores and serves back.
 */
export async function sendFile(
  client: AgentClient,
  conversationId: string,
  file: Blob,
  name: string,
  onProgress?: (progress: UploadProgress) => void,
): Promise<{ attachment: Attachment; message: SendMessageResponse['message'] }> {
  const attachment = await client.attachments.upload(file, { name, onProgress });
  // A message may reference an attachment only once its bytes are in, which upload() waited for.
  const caption = `Here is ${name}.`;
  const { message } = await client.messages.send(conversationId, {
    content: [
      { type: 'text', text: caption },
      { type: 'file', attachmentId: attachment.attachment_id },
    ],
    fallbackText: caption,
  });
  return { attachment, message };
}

const MIME_TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.ts': 'text/plain',
  '.md': 'text/markdown',
  '.json': 'application/json',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
};

/** A file on disk as a Blob: read while it is uploaded (never whole in memory), with progress as it goes. */
export function fileBlob(path: string): Promise<Blob> {
  return openAsBlob(path, { type: MIME_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream' });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = process.argv[2] ?? fileURLToPath(import.meta.url);
  const name = basename(path);
  const { AMS_API_KEY, AMS_CONVERSATION_ID } = process.env;
  // Your agent (baseUrl from AMS_BASE_URL) and conversation; else a throwaway agent on the mock.
  const { client, conversationId, close } =
    AMS_API_KEY && AMS_CONVERSATION_ID
      ? { client: new AgentClient({ apiKey: AMS_API_KEY }), conversationId: AMS_CONVERSATION_ID, close() {} }
      : await devAgentOnMock('uploader');

  const progress = ({ percent, transferredBytes, totalBytes }: UploadProgress) =>
    process.stdout.write(
      `\rUploading ${name}: ${Math.round(percent * 100)}% (${transferredBytes} of ${totalBytes} bytes)`,
    );
  const { attachment, message } = await sendFile(
    client,
    conversationId,
    await fileBlob(path),
    name,
    progress,
  );
  console.log(`\nSent message ${message.id} with ${attachment.attachment_id}`);
  console.log(`Download it (no token needed) until ${attachment.expires_at}: ${attachment.download_url}`);
  await close();
}
