// Parts of the SDK load with their first use (import()), not with the client: ky and the sending code
// with the first call (transport.ts), the streaming side with the first stream or reply. Such a load
// can fail where a static import could not: the app's host no longer serves an old chunk after a
// deploy, or the network drops while a browser fetches it. The caller then gets the SDK's typed
// ConnectionError (nothing was sent), never a bare loader error, and nothing remembers the failure:
// the next call loads again.
import { ConnectionError } from './errors.js';

/**
 * Runs `load` (an `import()`); a failure becomes a ConnectionError naming `operation`.
 * @internal
 */
export async function loadOnUse<T>(load: () => Promise<T>, operation: string): Promise<T> {
  try {
    return await load();
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new ConnectionError(
      `${operation}: the SDK's code for this call could not be loaded, so nothing was sent (${detail}).`,
      { cause },
    );
  }
}
