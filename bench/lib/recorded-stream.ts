// A recorded `text/event-stream` answer, in the service's exact format (the mock's field order and
// id shapes), made deterministically so every run and every reader gets the same bytes.
import { seededRandom } from './stats.js';

const encoder = new TextEncoder();
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
// Token-like pieces, multi-byte characters among them, as a model streams them.
const TOKENS = [
  'The',
  ' weather',
  ' in',
  ' Zürich',
  ' is',
  ' sunny',
  ',',
  ' 21',
  '°C',
  '.',
  ' 🌤',
  ' Grüße',
  ' 世界',
  '\n',
  ' and',
  ' tomorrow',
];

/** How the recorded stream's patches are sized. */
export interface RecordingShape {
  /** Total size to reach, in bytes. */
  bytes: number;
  /** Characters per patch: a token or so (`token`), or a writer's 256-character batch (`batch`). */
  patch: 'token' | 'batch';
  /** Bytes per chunk handed to the reader, as the network would cut them. */
  chunkBytes?: number;
}

/** The recording as chunks, its event count, and the text its patches append. */
export interface Recording {
  chunks: Uint8Array[];
  bytes: number;
  events: number;
  text: string;
}

const ids = (random: () => number, prefix: string) =>
  `${prefix}_${Array.from({ length: 20 }, () => ALPHABET[Math.floor(random() * ALPHABET.length)]).join('')}`;

/** Builds a recording of at least `shape.bytes` bytes: started, patches (keep-alives among them), completed. */
export function recordStream(shape: RecordingShape, seed = 7): Recording {
  const random = seededRandom(seed);
  const messageId = ids(random, 'msg');
  const blockId = ids(random, 'blk');
  const conversationId = ids(random, 'cnv');
  const parts: string[] = [];
  let size = 0;
  let seq = 0;
  const text: string[] = [];
  const event = (type: string, fields: Record<string, unknown>) => {
    seq += 1;
    const data = {
      schema: 'svc.event.v1',
      eventId: ids(random, 'evt'),
      conversationId,
      type,
      seq,
      ...fields,
    };
    const line = `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
    parts.push(line);
    size += Buffer.byteLength(line);
  };
  const piece = () => {
    const target = shape.patch === 'token' ? 1 : 12;
    let value = '';
    for (let i = 0; i < target || (shape.patch === 'batch' && value.length < 256); i++) {
      value += TOKENS[Math.floor(random() * TOKENS.length)];
      if (shape.patch === 'batch' && value.length >= 256) break;
    }
    return shape.patch === 'batch' ? value.slice(0, 256) : value;
  };
  event('message.started', {
    message: { id: messageId, content: [{ id: blockId, type: 'text', text: '' }] },
  });
  while (size < shape.bytes) {
    const value = piece();
    text.push(value);
    event('message.patch', { messageId, patch: { op: 'appendText', blockId, path: '/text', value } });
    if (seq % 5000 === 0) {
      parts.push(': keep-alive\n\n');
      size += 14;
    }
  }
  event('message.completed', { messageId });
  const all = encoder.encode(parts.join(''));
  const chunkBytes = shape.chunkBytes ?? 16 * 1024;
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < all.byteLength; at += chunkBytes) chunks.push(all.subarray(at, at + chunkBytes));
  return { chunks, bytes: all.byteLength, events: seq, text: text.join('') };
}

/** A fresh body that hands over the chunks one per pull, as a network body would. */
export function bodyOf(chunks: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[next++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk);
    },
  });
}
