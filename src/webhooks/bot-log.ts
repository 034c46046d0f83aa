// The bot's own log lines. The client's Logger has only `debug`; the bot uses `warn` and `error` when the
// logger has them (console, pino), and a handler failure is never silent, even with no logger at all.

import type { Logger } from '../core/options.js';

/** The levels the bot writes. */
export type Level = 'warn' | 'error';

/** Writes a bot line at a level: the logger's `warn`/`error` when it has them, else its debug. */
export function logAt(
  logger: Logger | undefined,
  level: Level,
  message: string,
  fields: Record<string, unknown>,
) {
  try {
    if (typeof logger === 'function') return logger(message, { level, ...flat(fields) });
    const method = (logger as Partial<Record<Level, (m: string, f: unknown) => void>> | undefined)?.[level];
    if (typeof method === 'function') return method.call(logger, message, fields);
    if (logger) return logger.debug(message, { level, ...flat(fields) });
    // No logger: a handler failure must still be seen somewhere; refused deliveries stay quiet.
    if (level === 'error') console.error(`agent-messaging: ${message}`, fields.error);
  } catch {
    // A broken logger must not turn a delivery into a 500.
  }
}

const flat = (fields: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(fields).map(([key, value]) => [
      key,
      typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
        ? value
        : value instanceof Error
          ? `${value.name}: ${value.message}`
          : String(value),
    ]),
  );
