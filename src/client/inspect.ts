// What a client shows of itself in logs: never its credential.

/** Node's hook for `util.inspect` / `console.log`, by its registered symbol (no import of node:util). */
export const inspectSymbol = Symbol.for('nodejs.util.inspect.custom');

/** The safe summary of a client, for inspect and JSON. @internal */
export function describeClient(baseUrl: string, credential: string): Record<string, string> {
  return { baseUrl, [credential]: '[redacted]' };
}
