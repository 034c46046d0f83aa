import { schemas } from 'agent-messaging';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
// Private: unit tests of the mock's hand checks against the schemas they stand in for.
import { MockError } from '../../src/testing/http.js';
import { idempotencyKeyOf } from '../../src/testing/idempotency.js';
import { isPlainTextSend } from '../../src/testing/send-check.js';

// The wire schemas as values, from the public namespace.
const { IdempotencyKey, SendMessageRequest, MAX_MESSAGE_TEXT, MAX_BLOCKS } = schemas;

const headerOf = (key: string) => ({ get: () => key, forEach: () => undefined });

/** What idempotencyKeyOf answers: the key, or the message of its 400. */
function keyAnswer(key: string): string {
  try {
    return `ok ${idempotencyKeyOf(headerOf(key))}`;
  } catch (error) {
    if (!(error instanceof MockError) || error.status !== 400) throw error;
    return `400 ${error.message}`;
  }
}

describe('the Idempotency-Key check', () => {
  it('accepts exactly the keys IdempotencyKey accepts, and refuses the others with the schema message', () => {
    // Characters on both sides of the printable ASCII range, and lengths around 8 and 255.
    const char = fc.oneof(
      fc.constantFrom(' ', '!', '~', '\x7f', '\t', 'é', '\u00a0', 'a', 'Z', '0', '-'),
      fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)),
    );
    const key = fc.oneof(
      fc.array(char, { minLength: 0, maxLength: 12 }).map((chars) => chars.join('')),
      fc
        .tuple(fc.integer({ min: 250, max: 260 }), fc.option(char, { nil: undefined }))
        .map(([length, odd]) => 'k'.repeat(length - 1) + (odd ?? 'k')),
    );
    fc.assert(
      fc.property(key, (value) => {
        const parsed = IdempotencyKey.safeParse(value);
        const answer = keyAnswer(value);
        if (parsed.success) expect(answer).toBe(`ok ${value}`);
        else expect(answer).toMatch(/^400 Idempotency-Key header: /);
      }),
      { numRuns: 2000 },
    );
    expect(keyAnswer('door-key-1')).toBe('ok door-key-1');
    expect(keyAnswer('short')).toMatch(/^400 Idempotency-Key header: /);
  });
});

// A value of a send body: the valid one, or something near it.
const text = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer({ min: MAX_MESSAGE_TEXT - 2, max: MAX_MESSAGE_TEXT + 2 }).map((n) => 'x'.repeat(n)),
  fc.integer({ min: 15_999, max: 16_001 }).map((n) => 'y'.repeat(n)),
);
const junk = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.boolean(),
  fc.string({ maxLength: 5 }),
  fc.constant([]),
);
const textBlock = fc.oneof(
  fc.record({ type: fc.constant('text'), text }),
  fc.record({ text, type: fc.constant('text') }),
  fc.record({ type: fc.constant('text'), text, id: fc.constantFrom('blk_1', '', 7) }),
  fc.record({ type: fc.constantFrom('text', 'actions', 'file', 'Text'), text: fc.oneof(text, junk) }),
  fc.record({ type: fc.constant('text'), text, extra: junk }),
  fc.record({ type: fc.constant('image'), attachmentId: fc.constant('att_1') }),
  fc.constant({ type: 'text' }),
  junk,
);
const content = fc.oneof(
  fc.array(textBlock, { maxLength: 4 }),
  fc
    .integer({ min: MAX_BLOCKS - 1, max: MAX_BLOCKS + 1 })
    .map((n) => Array.from({ length: n }, () => ({ type: 'text', text: 'hi' }))),
  junk,
);
const sendBody = fc.oneof(
  fc.record({ schema: fc.constant('svc.agent-send.v1'), content }),
  fc.record({ content, schema: fc.constant('svc.agent-send.v1') }),
  fc.record({ schema: fc.constantFrom('svc.agent-send.v1', 'svc.agent-send.v2', ''), content }),
  fc
    .record({
      schema: fc.constant('svc.agent-send.v1'),
      content,
      extra: fc.constantFrom('fallbackText', 'metadata', 'stream', 'replyToMessageId', 'other'),
      value: junk,
    })
    .map(({ extra, value, ...body }) => ({ ...body, [extra]: value })),
  fc.record({ schema: fc.constant('svc.agent-send.v1') }),
  junk,
);

describe('the plain text send check', () => {
  it('accepts only bodies SendMessageRequest accepts unchanged', () => {
    let accepted = 0;
    fc.assert(
      fc.property(sendBody, (body) => {
        // As the mock gets it: a value JSON.parse made.
        const value: unknown = JSON.parse(JSON.stringify(body));
        if (!isPlainTextSend(value)) return;
        accepted += 1;
        const parsed = SendMessageRequest.safeParse(value);
        expect(parsed.success).toBe(true);
        expect(parsed.data).toEqual(value);
      }),
      { numRuns: 3000 },
    );
    // Not vacuous: the plain bodies (about a sixth of the runs) were taken by the hand check.
    expect(accepted).toBeGreaterThan(100);
  });

  it('takes the plainest sends and leaves every other shape to the schema', () => {
    const plain = { schema: 'svc.agent-send.v1', content: [{ type: 'text', text: 'hi' }] };
    expect(isPlainTextSend(plain)).toBe(true);
    expect(isPlainTextSend({ ...plain, content: [] })).toBe(true);
    expect(isPlainTextSend({ ...plain, fallbackText: 'hi' })).toBe(false);
    expect(isPlainTextSend({ ...plain, content: [{ type: 'text', text: 'hi', id: 'blk_1' }] })).toBe(false);
    expect(isPlainTextSend(JSON.parse('{"schema":"svc.agent-send.v1","content":[],"__proto__":{}}'))).toBe(
      false,
    );
  });
});
