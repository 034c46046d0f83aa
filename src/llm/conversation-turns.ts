// A conversation's messages as turns: who spoke (the agent, or which user) and what they said, in
// order, tombstones gone. The formats of model-messages.ts are written from these.
import { ValidationError } from '../core/errors.js';
import type { Message } from '../schemas/messages.js';
import { record, str } from './stream-pieces.js';

/** A file or image a message holds. */
export interface TurnFile {
  type: 'file' | 'image';
  attachmentId: string;
  /** Where the model can fetch it, when known. */
  url?: string;
  /** The declared type, when the message says (else `image` or `application/octet-stream`). */
  mediaType: string;
  filename?: string;
}

/** One piece of a turn. @internal */
export type TurnPart = { type: 'text'; text: string } | TurnFile;

/** One message as a model sees it. @internal */
export interface Turn {
  role: 'user' | 'assistant';
  /** The sender's id: the service's, where a display name is whatever the user chose. */
  senderId: string;
  parts: TurnPart[];
}

/** Resolves where a model can fetch an attachment; undefined leaves it as a note in the text. */
export type FileUrlResolver = (file: {
  attachmentId: string;
  type: 'file' | 'image';
  messageId: string;
}) => string | URL | undefined;

/**
 * The turns of `messages`, oldest first whatever order they come in; tombstones and empty messages
 * skipped. A `fileUrl` answer that is not an absolute URL is a ValidationError of `operation`.
 * @internal
 */
export function turnsOf(
  messages: readonly Message[],
  agentId: string,
  fileUrl: FileUrlResolver | undefined,
  operation: string,
): Turn[] {
  const turns: Turn[] = [];
  for (const message of [...messages].sort((a, b) => a.sequence - b.sequence)) {
    if (message.status === 'deleted') continue;
    const parts = partsOf(message, fileUrl, operation);
    if (parts.length === 0) continue;
    const senderId = str(record(message.sender)?.id) ?? '';
    turns.push({ role: senderId === agentId ? 'assistant' : 'user', senderId, parts });
  }
  return turns;
}

function partsOf(message: Message, fileUrl: FileUrlResolver | undefined, operation: string): TurnPart[] {
  const parts: TurnPart[] = [];
  for (const part of message.parts ?? []) {
    const fields = part as Record<string, unknown>;
    if (part.type === 'text' && part.text) {
      // A quick-reply click is a text part holding the label the user tapped: kept as it is.
      parts.push({ type: 'text', text: part.text });
    } else if ((part.type === 'file' || part.type === 'image') && part.attachment_id) {
      const type = part.type as 'file' | 'image';
      const resolved = fileUrl?.({ attachmentId: part.attachment_id, type, messageId: message.id });
      const url =
        urlOf(resolved, part.attachment_id, operation) ?? str(fields.download_url) ?? str(fields.url);
      const filename = str(fields.name) ?? str(fields.filename);
      parts.push({
        type,
        attachmentId: part.attachment_id,
        mediaType: str(fields.mime_type) ?? (type === 'image' ? 'image' : 'application/octet-stream'),
        ...(url ? { url } : {}),
        ...(filename ? { filename } : {}),
      });
    }
    // Actions blocks (the agent's quick replies) are buttons, not words: the click says what was chosen.
  }
  // A message with no parts in history (older services) still has its fallback text.
  if (parts.length === 0 && message.fallback_text) parts.push({ type: 'text', text: message.fallback_text });
  return parts;
}

// What a resolver answered, as an absolute URL's text; the answer itself stays out of the error (a
// signed URL is a secret).
function urlOf(resolved: unknown, attachmentId: string, operation: string): string | undefined {
  if (resolved === undefined) return undefined;
  if (resolved instanceof URL) return resolved.href;
  if (typeof resolved === 'string' && URL.canParse(resolved)) return resolved;
  const message = `returned ${typeof resolved === 'string' ? 'a string that is not an absolute URL' : `a ${resolved === null ? 'null' : typeof resolved}`} for ${attachmentId}; return a URL, its text, or undefined`;
  throw new ValidationError([{ field: 'fileUrl', message }], operation);
}

/** A file as words, for a format or a role that cannot hold it as a part. @internal */
export function fileNote(file: TurnFile): string {
  return `[${file.type}: ${file.filename ?? file.attachmentId}${file.url ? ` ${file.url}` : ''}]`;
}

/**
 * Keeps the newest turns whose text fits in `maxChars`, dropping the oldest first; a newest turn
 * longer than that alone keeps its end, after an ellipsis.
 * @internal
 */
export function withinChars(turns: Turn[], maxChars: number | undefined): Turn[] {
  if (maxChars === undefined) return turns;
  const size = (turn: Turn) =>
    turn.parts.reduce(
      (sum, part) => sum + (part.type === 'text' ? part.text.length : fileNote(part).length),
      0,
    );
  const kept: Turn[] = [];
  let total = 0;
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i] as Turn;
    if (total + size(turn) > maxChars) {
      if (kept.length === 0) kept.unshift(cutToEnd(turn, maxChars));
      break;
    }
    total += size(turn);
    kept.unshift(turn);
  }
  return kept;
}

function cutToEnd(turn: Turn, maxChars: number): Turn {
  const text = turn.parts.map((part) => (part.type === 'text' ? part.text : fileNote(part))).join('\n');
  let start = Math.max(0, text.length - maxChars + 1);
  // Never start inside a surrogate pair: half an emoji is not text.
  const unit = text.charCodeAt(start);
  if (unit >= 0xdc00 && unit <= 0xdfff) start += 1;
  return { ...turn, parts: [{ type: 'text', text: `…${text.slice(start)}` }] };
}
