// The streaming defaults the main entry exports, in a module of their own: the entry re-exports them
// from here, so a bundler that splits by module (esbuild) does not bring the reader, the writer or the
// options' checks up front with `import { AgentClient }` (bench/bundle-size.mjs).

/** How long a stream may stay silent by default: four times the service's 15 s keep-alive. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

/** The defaults of `CoalesceOptions`, as Slack's `chatStream` buffers. */
export const DEFAULT_COALESCE = { chars: 256, ms: 100 } as const;

/** The note of a reply cut short, by default. */
export const DEFAULT_INTERRUPTED_NOTE = ' … [interrupted]';
