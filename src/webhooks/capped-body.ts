// A request body read with a cap: a sender cannot make the bot (or the mock) buffer an unbounded
// body before anything is checked.

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
