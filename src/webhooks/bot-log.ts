// The bot's own log lines. The client's Logger has only `debug`; the bot uses `warn` and `error` when the
// logger has them (console, pino), and a handler failure is never silent, even with no logger at all.

import { readEnv } from '../core/client-config.js';
import type { Logger } from '../core/options.js';

/** The levels the bot writes. */
export type Level = 'debug' | 'warn' | 'error';

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
    // The debug log was asked for (AGENT_MESSAGING_DEBUG): it goes to the console.
    if (level === 'debug') console.debug(`agent-messaging: ${message}`, flat(fields));
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

/** The environment variable that turns the bot's debug log on (any value but empty or `0`). */
export const DEBUG_VARIABLE = 'AGENT_MESSAGING_DEBUG';

/**
 * The debug log of the lanes and the dedupe (why a message waited, ran, was retried or dropped), when
 * `AGENT_MESSAGING_DEBUG` is set where the bot was created; `undefined` (nothing written, nothing
 * built) otherwise. Lines go to the logger's debug (or the console without a logger), at level `debug`.
 */
export function debugLog(logger: Logger | undefined) {
  const value = readEnv(DEBUG_VARIABLE);
  if (value === undefined || value === '' || value === '0') return undefined;
  return (message: string, fields: Record<string, unknown>) => logAt(logger, 'debug', message, fields);
}
