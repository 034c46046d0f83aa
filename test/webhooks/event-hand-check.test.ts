import { verifyWebhook } from 'agent-messaging';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
// Private: the SDK's check of a webhook event (the union of the event schemas).
import { parseWebhookEvent } from '../../src/schemas/webhooks.js';
// Private: the intake's hand check, held to the schema it stands in for.
import { isCommonWebhookEvent } from '../../src/webhooks/event-hand-check.js';
import { messageReceivedBody, now, rejection, sign, testEventBody } from './fixtures.js';

/** A field left out of its object. */
const ABSENT = Symbol('absent');

// The numbers on both sides of what `z.int()` accepts (a safe integer).
const edges = fc.constantFrom(
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 1,
  -Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER - 1,
  0.5,
  2.000001,
  1e300,
);
const int = fc.oneof(
  { arbitrary: fc.integer({ min: -5, max: 1000 }), weight: 6 },
  { arbitrary: edges, weight: 1 },
);
// Values a field should not hold.
const junk = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.string({ maxLength: 3 }),
  edges,
  fc.constant([]),
  fc.constant({}),
  fc.constant(['x']),
);
const str = fc.string({ maxLength: 6 });

/** An object of the given fields (ABSENT ones dropped), sometimes with an unknown field or an own `__proto__`. */
function object(fields: Record<string, fc.Arbitrary<unknown>>) {
  return fc
    .tuple(fc.record(fields), fc.constantFrom('none', 'none', 'none', 'none', 'extra', '__proto__'), junk)
    .map(([record, extra, value]) => {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(record)) if (item !== ABSENT) out[key] = item;
      if (extra === 'extra') out.x_extension = value;
      // JSON.stringify writes an own `__proto__`, and JSON.parse makes it an own property again.
      if (extra === '__proto__') Object.defineProperty(out, '__proto__', { value, enumerable: true });
      return out;
    });
}
const optional = (arb: fc.Arbitrary<unknown>) => fc.oneof(arb, fc.constant(ABSENT));
const nullish = (arb: fc.Arbitrary<unknown>) => fc.oneof(arb, fc.constant(null), fc.constant(ABSENT));
const array = (arb: fc.Arbitrary<unknown>) => fc.array(arb, { maxLength: 3 });

// A valid event of every type (the integers aside, which straddle the safe range)...
const part = object({
  part_index: int,
  type: fc.constantFrom('text', 'file', 'card'),
  text: optional(str),
  attachment_id: optional(str),
  actions: optional(array(object({ actionId: str }))),
});
const message = object({
  id: str,
  conversation_id: str,
  sequence: int,
  sender: object({ id: str }),
  parts: optional(array(part)),
  fallback_text: nullish(str),
  status: fc.constantFrom('sent', 'deleted', 'later'),
  created_at: str,
  reply_to: nullish(object({ message_id: str, part_index: int })),
  invoked_agents: optional(array(str)),
  suggestions: optional(array(object({ text: str }))),
  reactions: optional(array(object({ part_index: int, emoji: str, actor_id: str }))),
  delivered_at: nullish(str),
  read_at: nullish(str),
  edited_at: nullish(str),
  revisions: optional(array(object({ parts: array(part), fallback_text: nullish(str), replaced_at: str }))),
  revision: optional(int),
});
const validEvent = object({
  schema: fc.constant('svc.event.v1'),
  eventId: str,
  type: fc.constantFrom('message.received', 'webhook.test', 'invite.expired', 'later.kind'),
  createdAt: str,
  agentId: str,
  conversationId: str,
  message,
  postback: fc.oneof(
    { arbitrary: fc.constant(ABSENT), weight: 1 },
    { arbitrary: object({ actionId: str, value: str, messageId: str }), weight: 1 },
  ),
});

/** Every place in a value: the path of each field and element, the root first. */
function places(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  const here = [path];
  if (typeof value !== 'object' || value === null) return here;
  for (const [key, item] of Object.entries(value)) {
    here.push(...places(item, [...path, Array.isArray(value) ? Number(key) : key]));
  }
  return here;
}

// ...and the same event with one place (field, element or the whole) replaced by junk or removed.
const event = fc
  .tuple(validEvent, fc.nat(), fc.oneof(junk, fc.constant(ABSENT)), fc.boolean())
  .map(([valid, pick, replacement, change]) => {
    const value: unknown = JSON.parse(JSON.stringify(valid));
    if (!change) return value;
    const all = places(value);
    const path = all[pick % all.length]!;
    if (path.length === 0) return replacement === ABSENT ? 'not an event' : replacement;
    let holder = value as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) holder = holder[key] as Record<string | number, unknown>;
    const last = path[path.length - 1]!;
    // defineProperty, not `=`: the place may be an own `__proto__`.
    const writable = { value: replacement, enumerable: true, writable: true, configurable: true };
    if (replacement !== ABSENT) Object.defineProperty(holder, last, writable);
    else if (Array.isArray(holder)) holder.splice(last as number, 1);
    else delete holder[last];
    return value;
  });

/** Whether any object in the value has an own `__proto__` key (the schema's copy drops it). */
function hasProtoKey(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (!Array.isArray(value) && Object.hasOwn(value, '__proto__')) return true;
  return Object.values(value).some(hasProtoKey);
}

describe('the hand check of the commonest webhook events', () => {
  it('accepts exactly the message.received and webhook.test events the schema accepts, as the schema answers them', () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(event, (built) => {
        // As the intake gets it: a value JSON.parse made.
        const value: unknown = JSON.parse(JSON.stringify(built));
        const parsed = parseWebhookEvent(value);
        const type = (value as { type?: unknown } | null)?.type;
        const common = type === 'message.received' || type === 'webhook.test';
        if (isCommonWebhookEvent(value)) {
          accepted += 1;
          expect(parsed.success).toBe(true);
          expect(value).toStrictEqual(parsed.data);
        } else if (common && parsed.success) {
          // The only valid common event it leaves to the schema: one the schema's copy changes.
          expect(hasProtoKey(value)).toBe(true);
        } else {
          refused += 1;
        }
      }),
      { numRuns: 10_000 },
    );
    // Not vacuous: both answers were given many times.
    expect(accepted).toBeGreaterThan(200);
    expect(refused).toBeGreaterThan(200);
  });

  it('takes the delivery the service sends, and leaves an unsafe integer or an own __proto__ to the schema', () => {
    const sent = JSON.parse(messageReceivedBody()) as { message: Record<string, unknown> };
    // With every field the service fills in (src/testing/message-view.ts).
    const filled = {
      reply_to: null,
      invoked_agents: [],
      suggestions: [],
      reactions: [],
      delivered_at: null,
      read_at: null,
      edited_at: null,
      revisions: [],
      revision: 1,
    };
    const delivery = { ...sent, message: { ...sent.message, ...filled } };
    expect(isCommonWebhookEvent(delivery)).toBe(true);
    expect(isCommonWebhookEvent(JSON.parse(testEventBody()))).toBe(true);
    const unsafe = { ...delivery, message: { ...delivery.message, sequence: Number.MAX_SAFE_INTEGER + 1 } };
    expect(isCommonWebhookEvent(unsafe)).toBe(false);
    expect(parseWebhookEvent(unsafe).success).toBe(false);
    const proto = JSON.parse(
      JSON.stringify(delivery).replace('{"id":"usr_1"', '{"__proto__":{},"id":"usr_1"'),
    );
    expect(isCommonWebhookEvent(proto)).toBe(false);
    expect(parseWebhookEvent(proto).success).toBe(true);
    // An action is an object of any fields, but not an array.
    const withActions = (actions: unknown[]) => ({
      ...delivery,
      message: { ...delivery.message, parts: [{ part_index: 0, type: 'actions', actions }] },
    });
    expect(isCommonWebhookEvent(withActions([{ actionId: 'a' }]))).toBe(true);
    expect(isCommonWebhookEvent(withActions([[]]))).toBe(false);
    expect(parseWebhookEvent(withActions([[]])).success).toBe(false);
  });

  it('through verifyWebhook: the event as the schema answers it, or the bad field named', async () => {
    const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    const body = messageReceivedBody('evt_2');
    const event = await verifyWebhook(body, await sign(body, secret), { secret, now });
    expect(event).toStrictEqual(parseWebhookEvent(JSON.parse(body)).data);
    const bad = body.replace('"sequence":1', '"sequence":1.5');
    const refused = await rejection(verifyWebhook(bad, await sign(bad, secret), { secret, now }));
    expect(refused.code).toBe('invalid_event');
    expect(refused.message).toMatch(/^message\.sequence: /);
  });
});
