// Sending one store operation to Redis: a deadline on the whole operation (a Redis that went away
// leaves node-redis queueing commands offline until it reconnects, which could be never), and every
// failure turned into a StoreUnavailableError naming the operation, so the runtime answers 503.

import { StoreUnavailableError } from '../store/store-error.js';
import type { RedisStoreClient } from './client.js';
import type { LuaScript } from './scripts.js';

/** Runs store operations over one client. @internal */
export interface Commands {
  /** One command, as `['SET', key, value]`. */
  send(operation: string, args: string[]): Promise<unknown>;
  /** One Lua script with its keys and arguments. */
  evalScript(operation: string, script: LuaScript, keys: string[], args: string[]): Promise<unknown>;
  /** Any other step (the subscriber's SUBSCRIBE), under the same deadline and error rule. */
  guard<T>(operation: string, run: () => Promise<T>): Promise<T>;
}

const isNoScript = (error: unknown) => error instanceof Error && error.message.startsWith('NOSCRIPT');

/** @internal */
export function createCommands(client: RedisStoreClient, timeoutMs: number): Commands {
  const guard = async <T>(operation: string, run: () => Promise<T>): Promise<T> => {
    if (!client.isOpen) {
      throw new StoreUnavailableError(
        operation,
        'the Redis client is closed (was it closed or never connected?)',
      );
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new StoreUnavailableError(operation, `Redis did not answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      // race() subscribes to `run()`'s promise, so its late rejection after the deadline is handled.
      return await Promise.race([run(), deadline]);
    } catch (error) {
      if (StoreUnavailableError.is(error)) throw error;
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw new StoreUnavailableError(operation, reason, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  };

  // `timeout` lets node-redis drop a command it still holds unsent (offline) once the deadline passed.
  const raw = (args: string[]) => client.sendCommand(args, { timeout: timeoutMs });

  return {
    guard,
    send: (operation, args) => guard(operation, () => raw(args)),
    evalScript: (operation, script, keys, args) =>
      guard(operation, async () => {
        const tail = [String(keys.length), ...keys, ...args];
        try {
          return await raw(['EVALSHA', script.sha, ...tail]);
        } catch (error) {
          if (!isNoScript(error)) throw error;
          return raw(['EVAL', script.source, ...tail]);
        }
      }),
  };
}
