// The one bounded read of a body, shared by the client's answers (send-call.ts), a bot's deliveries
// (webhooks/verify.ts) and the mock's requests (testing/service.ts): a sender cannot make any of them
// buffer an unbounded (or decompression-bombed) body, since the read stops one chunk past the limit.

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
  const over = size > limit;
  // A body that came in one chunk (most answers) is that chunk: no copy.
  if (chunks.length === 1 && !over) return { bytes: chunks[0] as Uint8Array, over };
  const bytes = new Uint8Array(Math.min(size, limit + 1));
  let offset = 0;
  // Only the last chunk can pass the limit: it is cut to what is left.
  for (const chunk of chunks) {
    bytes.set(chunk.subarray(0, bytes.length - offset), offset);
    offset += chunk.byteLength;
  }
  return { bytes, over };
}
