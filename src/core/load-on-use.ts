// Parts of the SDK load with their first use (import()), not with the client: ky and the sending code
// with the first call (transport.ts), the streaming side with the first stream or reply. Such a load
// can fail where a static import could not: the app's host no longer serves an old chunk after a
// deploy, or the network drops while a browser fetches it. The caller then gets the SDK's typed
// ConnectionError (nothing was sent), never a bare loader error, and nothing remembers the failure:
// the next call loads again. A call's own signal ends its wait for a slow load, as it ends the call, and
// so does its timeout: a chunk whose fetch hangs must not hang a call that set `timeoutMs`.
import { ConnectionError, RequestAbortedError, TimeoutError } from './errors.js';

const aborted = (signal: AbortSignal) =>
  new RequestAbortedError('The request was aborted by its signal.', { cause: signal.reason });

/**
 * Runs `load` (an `import()`); a failure becomes a ConnectionError naming `operation`, `signal` (the
 * call's) rejects the wait with RequestAbortedError, as an abort of the call does, and a load slower
 * than `timeoutMs` (the call's per-attempt timeout) rejects it with TimeoutError. Nothing was sent in
 * any of the three cases.
 * @internal
 */
export async function loadOnUse<T>(
  load: () => Promise<T>,
  operation: string,
  signal?: AbortSignal,
  timeoutMs?: number,
): Promise<T> {
  if (signal?.aborted) throw aborted(signal);
  const loading: Promise<T> = load().catch((cause: unknown) => {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new ConnectionError(
      `${operation}: the SDK's code for this call could not be loaded, so nothing was sent (${detail}).`,
      { cause },
    );
  });
  if (!signal && timeoutMs === undefined) return loading;
  let onAbort: (() => void) | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ended = new Promise<never>((_, reject) => {
    if (signal) {
      onAbort = () => reject(aborted(signal));
      signal.addEventListener('abort', onAbort, { once: true });
    }
    if (timeoutMs !== undefined) {
      const message = `${operation}: the SDK's code for this call did not load within ${timeoutMs} ms, so nothing was sent.`;
      timer = setTimeout(() => reject(new TimeoutError(message)), timeoutMs);
    }
  });
  try {
    return await Promise.race([loading, ended]);
  } finally {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    clearTimeout(timer);
  }
}
