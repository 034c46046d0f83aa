// The options of createRedisStore, checked before anything is sent: a client that is not connected or
// a prefix that cannot be a clean key segment is a ValidationError naming the field, at construction.

import { ValidationError } from '../core/errors.js';
import type { FieldIssue } from '../schemas/issues.js';
import type { RedisStoreClient } from './client.js';

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /** A connected node-redis 5 client (`await createClient({ url }).connect()`), or an equivalent. */
  client: RedisStoreClient;
  /** Put before every key and channel, so several bots share one Redis. `agent-messaging:` by default. */
  prefix?: string;
  /**
   * How long one store call may take before it fails with a `StoreUnavailableError` (the delivery then
   * answers 503 and the service retries). 2,000 ms by default.
   */
  timeoutMs?: number;
  /** Errors of the store's own subscriber connection (reconnects after Redis went away). Ignored by default. */
  onError?: (error: Error) => void;
}

/** The default key prefix. */
export const DEFAULT_REDIS_PREFIX = 'agent-messaging:';
/** The default time a store call may take. */
export const DEFAULT_REDIS_TIMEOUT_MS = 2_000;

// Printable ASCII without the space: a prefix shows up verbatim in `redis-cli --scan` and in ACL
// key patterns, where spaces and control characters are a trap. `{`/`}` stay allowed (cluster hash tags).
const PREFIX = /^[\x21-\x7e]{1,64}$/;

/** The checked options with their defaults. @internal */
export interface ResolvedRedisStoreOptions {
  client: RedisStoreClient;
  prefix: string;
  timeoutMs: number;
  onError: (error: Error) => void;
}

/** Checks the options; throws one ValidationError naming every bad field. @internal */
export function resolveRedisStoreOptions(options: RedisStoreOptions): ResolvedRedisStoreOptions {
  if (typeof options !== 'object' || options === null) {
    throw new ValidationError([{ field: 'options', message: 'must be an object' }], 'createRedisStore');
  }
  const issues: FieldIssue[] = [];
  const { client, prefix = DEFAULT_REDIS_PREFIX, timeoutMs = DEFAULT_REDIS_TIMEOUT_MS, onError } = options;

  if (
    typeof client !== 'object' ||
    client === null ||
    typeof client.sendCommand !== 'function' ||
    typeof client.duplicate !== 'function'
  ) {
    issues.push({ field: 'client', message: 'must be a node-redis 5 client (createClient() from "redis")' });
  } else if (!client.isOpen) {
    issues.push({ field: 'client', message: 'is not connected: call `await client.connect()` first' });
  }
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
    issues.push({
      field: 'prefix',
      message: 'must be 1 to 64 printable ASCII characters with no spaces (such as "my-bot:")',
    });
  }
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    issues.push({ field: 'timeoutMs', message: 'must be a positive number of milliseconds' });
  }
  if (onError !== undefined && typeof onError !== 'function') {
    issues.push({ field: 'onError', message: 'must be a function' });
  }
  if (issues.length > 0) throw new ValidationError(issues, 'createRedisStore');
  return { client, prefix, timeoutMs, onError: onError ?? (() => {}) };
}
