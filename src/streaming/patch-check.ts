// `message.patch` is nearly every event of a stream, and the zod check costs more than JSON.parse
// of the event itself; this check by hand accepts exactly what `MessagePatchEvent` accepts (a
// property test holds the two together), so the reader can skip zod for a well-formed patch and
// fall back to it, errors and all, for anything else.
import type { MessagePatchEvent } from '../schemas/stream.js';

type Fields = Record<string, unknown>;

/**
 * True when `data` (as JSON.parse made it) is a `message.patch` event with every field its schema
 * requires; the object can then be used as it is, as zod would have returned an equal copy.
 */
export function isWellFormedPatchEvent(data: unknown): data is MessagePatchEvent {
  if (!isPlainRecord(data)) return false;
  const event = data as Fields;
  if (
    event.type !== 'message.patch' ||
    typeof event.schema !== 'string' ||
    typeof event.eventId !== 'string' ||
    typeof event.conversationId !== 'string' ||
    !Number.isSafeInteger(event.seq) ||
    typeof event.messageId !== 'string'
  ) {
    return false;
  }
  const patch = event.patch;
  if (!isPlainRecord(patch)) return false;
  const fields = patch as Fields;
  return (
    typeof fields.op === 'string' &&
    typeof fields.blockId === 'string' &&
    typeof fields.path === 'string' &&
    typeof fields.value === 'string'
  );
}

/**
 * An object zod's `looseObject` would copy unchanged. zod drops an own `__proto__` key from its
 * copy (assigning it would replace the copy's prototype), so such an object is left to zod.
 */
function isPlainRecord(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !Object.hasOwn(value, '__proto__')
  );
}
