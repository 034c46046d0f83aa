// A conversation's messages as turns: who spoke (the agent, or which user) and what they said, in
// order, tombstones gone. The formats of model-messages.ts are written from these.
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
export type TurnPart = { type: 'text'; text: string } | ({ kind: 'file' } & TurnFile);

/** One message as a model sees it. @internal */
export interface Turn {
  role: 'user' | 'assistant';
  senderId: string;
  /** The sender's display name when the message carries one, else its id. */
  name: string;
  parts: TurnPart[];
}

/** Resolves where a model can fetch an attachment; undefined leaves it as a note in the text. */
export type FileUrlResolver = (file: {
  attachmentId: string;
  type: 'file' | 'image';
  messageId: string;
}) => string | URL | undefined;

/** The turns of `messages`, oldest first whatever order they come in; tombstones and empty messages skipped. @internal */
export function turnsOf(messages: readonly Message[], agentId: string, fileUrl?: FileUrlResolver): Turn[] {
  const turns: Turn[] = [];
  for (const message of [...messages].sort((a, b) => a.sequence - b.sequence)) {
    if (message.status === 'deleted') continue;
    const parts = partsOf(message, fileUrl);
    if (parts.length === 0) continue;
    const sender = record(message.sender) ?? {};
    const senderId = str(sender.id) ?? '';
    turns.push({
      role: senderId === agentId ? 'assistant' : 'user',
      senderId,
      name: str(sender.display_name) ?? senderId,
      parts,
    });
  }
  return turns;
}

function partsOf(message: Message, fileUrl: FileUrlResolver | undefined): TurnPart[] {
  const parts: TurnPart[] = [];
  for (const part of message.parts ?? []) {
    const fields = part as Record<string, unknown>;
    if (part.type === 'text' && part.text) {
      // A quick-reply click is a text part holding the label the user tapped: kept as it is.
      parts.push({ type: 'text', text: part.text });
    } else if ((part.type === 'file' || part.type === 'image') && part.attachment_id) {
      const type = part.type as 'file' | 'image';
      const resolved = fileUrl?.({ attachmentId: part.attachment_id, type, messageId: message.id });
      const url = resolved?.toString() ?? str(fields.download_url) ?? str(fields.url);
      const filename = str(fields.name) ?? str(fields.filename);
      parts.push({
        kind: 'file',
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
