// Reading the raw inputs of a delivery (headers and body) from whatever a runtime or framework hands over.
// Malformed input must become a WebhookVerificationError, never a TypeError, so every access is guarded.

import { WebhookVerificationError } from './verification-error.js';

/** Headers as runtimes give them: a `Headers` object, or a plain record in any case, values possibly arrays. */
export type WebhookHeaders =
  | Headers
  | { get(name: string): string | null | undefined }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** The body as it was signed: text, or the bytes (a Node `Buffer` is bytes). */
export type WebhookBody = string | Uint8Array | ArrayBuffer;

/**
 * One header's value, whatever the container; a repeated header is joined with `, ` as `Headers` does.
 * A container that throws while read (a broken `get`, a Proxy) is refused as missing that header.
 */
export function readHeader(headers: unknown, name: string): string | undefined {
  try {
    return readHeaderOf(headers, name);
  } catch {
    throw new WebhookVerificationError(
      'missing_headers',
      `${name}: the headers object threw while it was read`,
    );
  }
}

function readHeaderOf(headers: unknown, name: string): string | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const getter = (headers as { get?: unknown }).get;
  if (typeof getter === 'function') {
    const value: unknown = getter.call(headers, name);
    return typeof value === 'string' ? value : undefined;
  }
  // Node's `req.headers` has lower-case names: looked up as they are, then in any case.
  const value = headerValue((headers as Record<string, unknown>)[name]);
  if (value !== undefined) return value;
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === name) return headerValue((headers as Record<string, unknown>)[key]);
  }
  return undefined;
}

/** A header record's value: a string, or a repeated header's strings joined as `Headers` joins them. */
function headerValue(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value.join(', ');
  return undefined;
}

const RAW_BODY_HELP =
  'Pass the raw request body exactly as received, a string or bytes: ' +
  "with Express mount `express.raw({ type: 'application/json' })` on the webhook route " +
  '(or use toNodeHandler from agent-messaging/node); with a Fetch Request use `await request.text()`. ' +
  'A body that was parsed and serialized again no longer matches its signature.';

/** The body as bytes; a parsed object or anything else is refused with how to get the raw body. */
export function bodyBytes(body: unknown): Uint8Array {
  if (typeof body === 'string') return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (typeof body === 'object' && body !== null) {
    throw new WebhookVerificationError(
      'body_already_parsed',
      `The webhook body was already parsed into an object. ${RAW_BODY_HELP}`,
    );
  }
  throw new WebhookVerificationError(
    'invalid_body',
    `The webhook body must be a string or bytes, got ${body === null ? 'null' : typeof body}. ${RAW_BODY_HELP}`,
  );
}

/** Largest delivery body read, in bytes: the service's own request limit (PROTOCOL.md section 2). */
export const MAX_DELIVERY_BYTES = 1024 * 1024;

/**
 * The request's body, or `'too_large'` when it is over `limit` bytes: a declared `content-length`
 * is trusted to refuse early, and the bytes are counted as they come in case it is absent or wrong,
 * so a sender cannot make the bot buffer an unbounded body before its signature is checked.
 * @internal
 */
export async function readLimitedBody(request: Request, limit: number): Promise<Uint8Array | 'too_large'> {
  const declared = request.headers.get('content-length')?.trim();
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limit) {
    await request.body?.cancel().catch(() => {});
    return 'too_large';
  }
  if (request.body === null) return new Uint8Array(0);
  const { bytes, over } = await readAtMost(request.body, limit);
  return over ? 'too_large' : bytes;
}

/**
 * Reads a body until it ends or passes `limit` bytes, then cancels it: what was read (at most
 * `limit` + 1 bytes) and whether it was over. Memory stays bounded whatever the sender does.
 * @internal
 */
export async function readAtMost(
  body: ReadableStream<Uint8Array>,
  limit: number,
): Promise<{ bytes: Uint8Array; over: boolean }> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      break;
    }
  }
  const kept = Math.min(size, limit + 1);
  const bytes = new Uint8Array(kept);
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, kept - offset);
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return { bytes, over: size > limit };
}
