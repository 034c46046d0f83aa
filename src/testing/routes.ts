// Every endpoint of SPEC.md plus the file URLs, in one table.
import { registerAgent, setWebhook } from './agents.js';
import { createAttachment, downloadFile, uploadFile } from './attachments.js';
import { createDirect, retrieveConversation } from './conversations.js';
import { markRead, react, sendReceipt, typing } from './interactions.js';
import { acceptInvite, createInvite } from './invites.js';
import { listMessages, sendMessage, unsendMessage } from './messages.js';
import { append, complete } from './patching.js';
import type { Route } from './router.js';

/** The routes of `/v1` and of the upload and download URLs. */
export const serviceRoutes: readonly Route[] = [
  registerAgent,
  setWebhook,
  createAttachment,
  // `direct` before `:conversation_id`, so the literal path wins.
  createDirect,
  retrieveConversation,
  sendMessage,
  listMessages,
  typing,
  sendReceipt,
  markRead,
  react,
  append,
  complete,
  unsendMessage,
  createInvite,
  acceptInvite,
  uploadFile,
  downloadFile,
];
