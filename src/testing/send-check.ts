// The commonest body of `POST /v1/conversations/{id}/messages`, checked by hand: `{ schema, content }`
// with text blocks only, each `{ type: 'text', text }`. The send schema (SendMessageRequest, strict)
// accepts exactly such a body as it is, so the mock takes it without the schema; every other body,
// valid or not, is read by the schema, which names the bad field. test/mock/hand-checks.test.ts
// holds the hand check to the schema's answer.
import { AGENT_SEND_SCHEMA } from '../schemas/common.js';
import { MAX_BLOCKS, MAX_MESSAGE_TEXT } from '../schemas/messages.js';

/** True for a plain text send that SendMessageRequest accepts unchanged; false means "ask the schema". */
export function isPlainTextSend(value: unknown): boolean {
  if (!isPlainObject(value) || !hasExactly(value, 'schema', 'content')) return false;
  const { schema, content } = value;
  if (schema !== AGENT_SEND_SCHEMA || !Array.isArray(content) || content.length > MAX_BLOCKS) return false;
  let total = 0;
  for (const block of content) {
    if (!isPlainObject(block) || !hasExactly(block, 'type', 'text')) return false;
    if (block.type !== 'text' || typeof block.text !== 'string') return false;
    total += block.text.length;
  }
  return total <= MAX_MESSAGE_TEXT;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object's own keys are these two, in either order. */
function hasExactly(object: object, a: string, b: string): boolean {
  const keys = Object.keys(object);
  return keys.length === 2 && (keys[0] === a ? keys[1] === b : keys[0] === b && keys[1] === a);
}
