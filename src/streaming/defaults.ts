// The streaming defaults, shared by the reader, the writer's options and the main entry.

/** How long a stream may stay silent by default: four times the service's 15 s keep-alive. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

/** The defaults of `CoalesceOptions`, as Slack's `chatStream` buffers. */
export const DEFAULT_COALESCE = { chars: 256, ms: 100 } as const;

/** The note of a reply cut short, by default. */
export const DEFAULT_INTERRUPTED_NOTE = ' … [interrupted]';
