// A hand check of the commonest webhook events, `message.received` and `webhook.test`, on the
// intake's hot path: the zod schema of the event (src/schemas/webhooks.ts) cost about a tenth of the
// receiver's CPU per delivery, a check of the same rules by hand a fraction of it. It answers only
// "surely valid": then the value JSON.parse made is the event as is (the schema would answer a deep
// copy of it). Anything else, valid or not, goes to the schema, which names the bad field. A property
// test holds the two to each other (test/webhooks/event-hand-check.test.ts).

type Obj = Record<string, unknown>;

const hasOwn = Object.hasOwn;

/**
 * A plain object as the schema reads one (not null, not an array), without an own `__proto__` key:
 * JSON.parse makes that an own property, and the schema drops it from its copy, so the value as it
 * came would not be what the schema answers.
 */
const isObject = (value: unknown): value is Obj =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !hasOwn(value, '__proto__');

const isString = (value: unknown): value is string => typeof value === 'string';
/** `z.int()`: a safe integer. */
const isInt = (value: unknown): boolean => Number.isSafeInteger(value);
/** `z.optional(...)`: absent (JSON has no `undefined`) or the inner check. */
const optional = (value: unknown, check: (value: unknown) => boolean) => value === undefined || check(value);
/** `z.nullish(z.string())`. */
const nullishString = (value: unknown) => value === undefined || value === null || typeof value === 'string';

function isArrayOf(value: unknown, check: (item: unknown) => boolean): boolean {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) if (!check(value[i])) return false;
  return true;
}

/** `MessagePart`. */
function isPart(value: unknown): boolean {
  return (
    isObject(value) &&
    isInt(value.part_index) &&
    isString(value.type) &&
    optional(value.text, isString) &&
    optional(value.attachment_id, isString) &&
    optional(value.actions, (actions) => isArrayOf(actions, isObject))
  );
}

const isSuggestion = (value: unknown) => isObject(value) && isString(value.text);

const isReaction = (value: unknown) =>
  isObject(value) && isInt(value.part_index) && isString(value.emoji) && isString(value.actor_id);

const isReplyTo = (value: unknown) =>
  value === undefined ||
  value === null ||
  (isObject(value) && isString(value.message_id) && isInt(value.part_index));

const isRevision = (value: unknown) =>
  isObject(value) &&
  isArrayOf(value.parts, isPart) &&
  nullishString(value.fallback_text) &&
  isString(value.replaced_at);

/** `Message` (src/schemas/messages.ts), field by field. */
function isMessage(value: unknown): boolean {
  return (
    isObject(value) &&
    isString(value.id) &&
    isString(value.conversation_id) &&
    isInt(value.sequence) &&
    isObject(value.sender) &&
    isString(value.sender.id) &&
    optional(value.parts, (parts) => isArrayOf(parts, isPart)) &&
    nullishString(value.fallback_text) &&
    isString(value.status) &&
    isString(value.created_at) &&
    isReplyTo(value.reply_to) &&
    optional(value.invoked_agents, (ids) => isArrayOf(ids, isString)) &&
    optional(value.suggestions, (items) => isArrayOf(items, isSuggestion)) &&
    optional(value.reactions, (items) => isArrayOf(items, isReaction)) &&
    nullishString(value.delivered_at) &&
    nullishString(value.read_at) &&
    nullishString(value.edited_at) &&
    optional(value.revisions, (items) => isArrayOf(items, isRevision)) &&
    optional(value.revision, isInt)
  );
}

const isPostback = (value: unknown) =>
  isObject(value) && isString(value.actionId) && isString(value.value) && isString(value.messageId);

/**
 * True when `data` (a value JSON.parse made) is surely a `message.received` or `webhook.test` event
 * the schema accepts unchanged; false means "ask the schema", not "invalid". @internal
 */
export function isCommonWebhookEvent(data: unknown): boolean {
  if (
    !isObject(data) ||
    !isString(data.schema) ||
    !isString(data.eventId) ||
    !isString(data.createdAt) ||
    !isString(data.agentId)
  ) {
    return false;
  }
  if (data.type === 'webhook.test') return true;
  return (
    data.type === 'message.received' &&
    isString(data.conversationId) &&
    isMessage(data.message) &&
    optional(data.postback, isPostback)
  );
}
