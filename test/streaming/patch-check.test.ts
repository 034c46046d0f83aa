import { InvalidResponseError } from 'agent-messaging';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
// Private: the SDK's check of a stream event (the union of the event schemas).
import { parseStreamEvent } from '../../src/schemas/stream.js';
// Private: a unit test of the reader's patch check.
import { isWellFormedPatchEvent } from '../../src/streaming/sse-reader.js';
import { eventsOf } from './helpers.js';

// A field of the event: its valid value, absent, or any JSON value instead.
type Entry = [key: string, value: unknown];

const VALID_EVENT: Entry[] = [
  ['schema', 'svc.event.v1'],
  ['eventId', 'evt_2'],
  ['conversationId', 'cnv_t'],
  ['type', 'message.patch'],
  ['seq', 2],
  ['messageId', 'msg_t'],
];
const VALID_PATCH: Entry[] = [
  ['op', 'appendText'],
  ['blockId', 'blk_t'],
  ['path', '/text'],
  ['value', 'Grüße 🌤'],
];

// Values near the edges of each rule: integers at the safe limit, -0, fractions, strings.
const nearMiss = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(2 ** 53, 2 ** 53 - 1, -(2 ** 53 - 1), -(2 ** 53), -0, 0.5, 1e21, '2', '', null, true),
  fc.constantFrom('message.patch', 'message.started', 'message.completed', 'message.reaction'),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Each valid field kept (most often, so a good share passes), dropped, or replaced; then unknown fields, `__proto__` among them. */
const fieldsAround = (valid: Entry[], replaced: fc.Arbitrary<unknown>) =>
  fc
    .tuple(
      fc.tuple(
        ...valid.map(([key, value]) =>
          fc.oneof(
            { weight: 20, arbitrary: fc.constant<Entry[]>([[key, value]]) },
            { weight: 1, arbitrary: fc.constant<Entry[]>([]) },
            { weight: 2, arbitrary: replaced.map((other): Entry[] => [[key, other]]) },
          ),
        ),
      ),
      fc.array(
        fc.tuple(
          fc.oneof(
            { weight: 4, arbitrary: fc.string() },
            fc.constantFrom('__proto__', 'constructor', 'toString'),
          ),
          fc.jsonValue(),
        ),
        { maxLength: 3 },
      ),
    )
    .map(([kept, extra]) => [...kept.flat(), ...extra]);

/** The JSON text of an object with these entries, in order (a repeated key: the last one wins). */
const objectText = (entries: Entry[]) =>
  `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value) ?? 'null'}`).join(',')}}`;

/** A `data:` field around the patch shape: mostly near-valid patches, sometimes anything at all. */
const dataText = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(
        fieldsAround(VALID_EVENT, nearMiss),
        fc.oneof(
          { weight: 6, arbitrary: fieldsAround(VALID_PATCH, nearMiss).map(objectText) },
          { weight: 1, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value) ?? 'null') },
          { weight: 1, arbitrary: fc.constant(null) },
        ),
      )
      .map(([event, patch]) => {
        const fields = event.map(
          ([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value) ?? 'null'}`,
        );
        if (patch !== null) fields.push(`"patch":${patch}`);
        return `{${fields.join(',')}}`;
      }),
  },
  { weight: 1, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value) ?? 'null') },
);

const hasOwnProto = (value: unknown) =>
  typeof value === 'object' && value !== null && Object.hasOwn(value, '__proto__');

describe('the hand check of message.patch events', () => {
  it('accepts exactly the patches the schema accepts (but those with an own __proto__ key), as the schema returns them', () => {
    fc.assert(
      fc.property(dataText, (text) => {
        const data: unknown = JSON.parse(text);
        const parsed = parseStreamEvent(data);
        const event = data as { type?: unknown; patch?: unknown } | null;
        const isPatch = event?.type === 'message.patch';
        // zod drops an own __proto__ key from its copy; the hand check leaves such objects to zod.
        const ownProto = hasOwnProto(event) || hasOwnProto(event?.patch);
        expect(isWellFormedPatchEvent(data)).toBe(parsed.success && isPatch && !ownProto);
        if (isWellFormedPatchEvent(data)) expect(data).toStrictEqual(parsed.data);
      }),
      { numRuns: 5000 },
    );
  });

  it('accepts a well-formed patch with unknown fields, keeping them', () => {
    const data: unknown = JSON.parse(
      `${objectText([...VALID_EVENT, ['extra', { nested: [1] }]]).slice(0, -1)},"patch":${objectText([...VALID_PATCH, ['note', 'x']])}}`,
    );
    expect(isWellFormedPatchEvent(data)).toBe(true);
    expect(data).toMatchObject({ extra: { nested: [1] }, patch: { note: 'x' } });
  });

  it('leaves a patch with an own __proto__ key to the schema, which drops that key', () => {
    const text = `${objectText([...VALID_EVENT, ['__proto__', { polluted: true }]]).slice(0, -1)},"patch":${objectText(VALID_PATCH)}}`;
    const data: unknown = JSON.parse(text);
    expect(isWellFormedPatchEvent(data)).toBe(false);
    const parsed = parseStreamEvent(data);
    expect(parsed.success).toBe(true);
    expect(Object.hasOwn(parsed.data as object, '__proto__')).toBe(false);
    expect((parsed.data as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it.each([
    ['seq', 'a fraction', { seq: 2.5 }, /malformed "message.patch" event: seq:/],
    ['seq', 'beyond the safe integers', { seq: 2 ** 53 }, /malformed "message.patch" event: seq:/],
    ['messageId', 'missing', { messageId: undefined }, /malformed "message.patch" event: messageId:/],
    [
      'patch.value',
      'a number',
      { patch: { op: 'appendText', blockId: 'blk_t', path: '/text', value: 7 } },
      /patch\.value:/,
    ],
  ])(
    'a patch whose %s is %s still fails with the schema’s error naming it',
    async (_field, _how, change, message) => {
      const started = {
        schema: 'svc.event.v1',
        eventId: 'evt_1',
        conversationId: 'cnv_t',
        type: 'message.started',
        seq: 1,
        message: { id: 'msg_t', content: [{ id: 'blk_t', type: 'text', text: '' }] },
      };
      const bad = {
        ...Object.fromEntries([...VALID_EVENT]),
        patch: Object.fromEntries(VALID_PATCH),
        ...change,
      };
      const text = `event: message.started\ndata: ${JSON.stringify(started)}\n\nevent: message.patch\ndata: ${JSON.stringify(bad)}\n\n`;
      const read = eventsOf([new TextEncoder().encode(text)]);
      await expect(read).rejects.toThrow(InvalidResponseError);
      await expect(eventsOf([new TextEncoder().encode(text)])).rejects.toThrow(message);
    },
  );
});
