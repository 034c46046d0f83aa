import * as z from 'zod/mini';

/**
 * A string schema typed as a set of known values that still accepts any other string,
 * so a value the service adds later is passed through instead of failing a parse.
 */
export function openEnum<const T extends readonly [string, ...string[]]>(_known: T) {
  return z.string() as unknown as z.ZodMiniType<T[number] | (string & {}), string>;
}

/**
 * The `type` of a content block or part: `'text' | 'actions' | 'file' | 'image'` (PROTOCOL.md section
 * 5), or one added later, which is passed through.
 */
export const ContentType = openEnum(['text', 'actions', 'file', 'image']);

/**
 * The known fields of a wire object, recursively: the `[k: string]: unknown` that a loose schema adds
 * is dropped from the type, so `message.convesation_id` does not compile, while unknown fields still
 * pass through at run time (read them with a cast). An object that only has an index signature, such
 * as an action's free-form fields, keeps it.
 */
export type Known<T> = T extends string | number | boolean | bigint | null | undefined
  ? T
  : T extends readonly (infer U)[]
    ? Known<U>[]
    : T extends object
      ? [KnownKey<T>] extends [never]
        ? T
        : { [K in keyof T as string extends K ? never : K]: Known<T[K]> }
      : T;
type KnownKey<T> = keyof { [K in keyof T as string extends K ? never : K]: true };

/** The TypeScript type of what a wire schema answers, without the index signature (see {@link Known}). */
export type Wire<S extends z.ZodMiniType> = Known<z.output<S>>;

/** An identifier with the given prefix, such as `usr_`. */
export const prefixedId = (prefix: string) =>
  z.string().check(z.regex(new RegExp(`^${prefix}`), { error: `must start with "${prefix}"` }));

/** A user id, `usr_...`. */
export const UserId = prefixedId('usr_');
/** An agent id, `agt_...`. */
export const AgentId = prefixedId('agt_');
/** A conversation id, `cnv_...`. */
export const ConversationId = prefixedId('cnv_');
/** A message id, `msg_...`. */
export const MessageId = prefixedId('msg_');
/** A content block id, `blk_...`. */
export const BlockId = prefixedId('blk_');
/** An attachment id, `att_...`. */
export const AttachmentId = prefixedId('att_');
/** A group invite id, `inv_...`. */
export const InviteId = prefixedId('inv_');

/** An ISO 8601 UTC timestamp as the service writes it. Read leniently: any string. */
export const Timestamp = z.string();

/** A string that holds at least one non-whitespace character. */
export const nonBlank = (min: number, max: number) =>
  z
    .string()
    .check(
      z.minLength(min),
      z.maxLength(max),
      z.regex(/\S/, { error: 'must contain a non-whitespace character' }),
    );

/** `Idempotency-Key`: 8 to 255 printable ASCII characters (PROTOCOL.md section 4). */
export const IdempotencyKey = z
  .string()
  .check(
    z.minLength(8),
    z.maxLength(255),
    z.regex(/^[\x21-\x7e]+$/, { error: 'must be printable ASCII without spaces' }),
  );

/** The six capability values of SPEC.md. */
export const CAPABILITIES = ['text', 'file', 'image', 'link_preview', 'card', 'buttons'] as const;
/** One of {@link CAPABILITIES}. */
export const Capability = z.enum(CAPABILITIES);
/** A non-empty list of capabilities without repeats. */
export const Capabilities = z.array(Capability).check(
  z.minLength(1),
  z.refine((values) => new Set(values).size === values.length, { error: 'must not repeat a value' }),
);

/** An absolute http or https URL. */
export const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' });

/** The `schema` value of the send shape. */
export const AGENT_SEND_SCHEMA = 'svc.agent-send.v1';
/** The `schema` value of stream and webhook events. */
export const EVENT_SCHEMA = 'svc.event.v1';
