import * as z from 'zod';

/**
 * A string schema typed as a set of known values that still accepts any other string,
 * so a value the service adds later is passed through instead of failing a parse.
 */
export function openEnum<const T extends readonly [string, ...string[]]>(_known: T) {
  return z.string() as unknown as z.ZodType<T[number] | (string & {}), string>;
}

/** An identifier with the given prefix, such as `usr_`. */
export const prefixedId = (prefix: string) =>
  z.string().regex(new RegExp(`^${prefix}`), { error: `must start with "${prefix}"` });

export const UserId = prefixedId('usr_');
export const AgentId = prefixedId('agt_');
export const ConversationId = prefixedId('cnv_');
export const MessageId = prefixedId('msg_');
export const BlockId = prefixedId('blk_');
export const AttachmentId = prefixedId('att_');
export const InviteId = prefixedId('inv_');

/** An ISO 8601 UTC timestamp as the service writes it. Read leniently: any string. */
export const Timestamp = z.string();

/** A string that holds at least one non-whitespace character. */
export const nonBlank = (min: number, max: number) =>
  z.string().min(min).max(max).regex(/\S/, { error: 'must contain a non-whitespace character' });

/** `Idempotency-Key`: 8 to 255 printable ASCII characters (PROTOCOL.md section 4). */
export const IdempotencyKey = z
  .string()
  .min(8)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, { error: 'must be printable ASCII without spaces' });

/** The six capability values of SPEC.md. */
export const CAPABILITIES = ['text', 'file', 'image', 'link_preview', 'card', 'buttons'] as const;
export const Capability = z.enum(CAPABILITIES);
export const Capabilities = z
  .array(Capability)
  .min(1)
  .refine((values) => new Set(values).size === values.length, { error: 'must not repeat a value' });

/** An absolute http or https URL. */
export const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' });

export const AGENT_SEND_SCHEMA = 'svc.agent-send.v1';
export const EVENT_SCHEMA = 'svc.event.v1';
