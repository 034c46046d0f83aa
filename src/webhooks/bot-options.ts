// Checks of createBot's options, all reported together in one ValidationError naming each field.

import { AgentClient } from '../client/agent-client.js';
import { ValidationError } from '../core/errors.js';
import type { FieldIssue } from '../schemas/issues.js';
import type { BotOptions } from './bot-types.js';
import { secretIssues } from './verify.js';

// Every option createBot takes: its own and those of the client it makes.
const BOT_OPTION_KEYS = new Set([
  'apiKey',
  'baseUrl',
  'timeoutMs',
  'maxRetries',
  'fetch',
  'logger',
  'webhookSecret',
  'ack',
  'ackTimeoutMs',
  'store',
  'concurrency',
  'session',
  'debounceMs',
  'lockTtlMs',
  'maxHandlerMs',
  'maxAttempts',
  'gapWaitMs',
  'toleranceSec',
  'waitUntil',
  'typingRenewMs',
  'now',
  'clock',
]);

/** The issues of the bot's own options. @internal */
export function checkOptions(options: BotOptions): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const key of Object.keys(options)) {
    if (!BOT_OPTION_KEYS.has(key)) issues.push({ field: key, message: 'is not an option of createBot' });
  }
  issues.push(...secretIssues(options.webhookSecret, 'webhookSecret'));
  const { ack, ackTimeoutMs, toleranceSec, typingRenewMs, waitUntil, now } = options;
  if (ack !== undefined && ack !== 'after-handler' && ack !== 'immediately') {
    issues.push({ field: 'ack', message: "must be 'after-handler' or 'immediately'" });
  }
  const nonNegative = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;
  if (ackTimeoutMs !== undefined && !nonNegative(ackTimeoutMs)) {
    issues.push({ field: 'ackTimeoutMs', message: 'must be a number of milliseconds >= 0' });
  }
  const { concurrency } = options;
  if (concurrency !== undefined && !['queue', 'interrupt', 'debounce', 'concurrent'].includes(concurrency)) {
    issues.push({
      field: 'concurrency',
      message: "must be 'queue', 'interrupt', 'debounce' or 'concurrent'",
    });
  }
  for (const field of ['debounceMs', 'lockTtlMs', 'maxHandlerMs'] as const) {
    const value = options[field];
    if (value !== undefined && !(nonNegative(value) && value > 0)) {
      issues.push({ field, message: 'must be a positive number of milliseconds' });
    }
  }
  if (options.gapWaitMs !== undefined && !nonNegative(options.gapWaitMs)) {
    issues.push({ field: 'gapWaitMs', message: 'must be a number of milliseconds >= 0' });
  }
  const { maxAttempts } = options;
  if (maxAttempts !== undefined && !(Number.isInteger(maxAttempts) && maxAttempts >= 1)) {
    issues.push({ field: 'maxAttempts', message: 'must be an integer >= 1' });
  }
  if (toleranceSec !== undefined && !nonNegative(toleranceSec)) {
    issues.push({ field: 'toleranceSec', message: 'must be a number of seconds >= 0' });
  }
  if (typingRenewMs !== undefined && !(nonNegative(typingRenewMs) && typingRenewMs > 0)) {
    issues.push({ field: 'typingRenewMs', message: 'must be a positive number of milliseconds' });
  }
  const storeMethods = ['setIfAbsent', 'get', 'set', 'compareAndSet', 'acquireLock', 'renewLock'] as const;
  const { store } = options;
  if (store !== undefined && !storeMethods.every((name) => typeof store?.[name] === 'function')) {
    issues.push({
      field: 'store',
      message: 'must be a BotStore (createMemoryStore() or createRedisStore())',
    });
  }
  const { session } = options;
  if (session !== undefined && (typeof session !== 'object' || session === null)) {
    issues.push({ field: 'session', message: 'must be an object { ttlMs?, initial? }' });
  } else if (session?.ttlMs !== undefined && !(nonNegative(session.ttlMs) && session.ttlMs > 0)) {
    issues.push({ field: 'session.ttlMs', message: 'must be a positive number of milliseconds' });
  } else if (session?.initial !== undefined && typeof session.initial !== 'function') {
    issues.push({ field: 'session.initial', message: 'must be a function answering an object' });
  }
  if (waitUntil !== undefined && typeof waitUntil !== 'function') {
    issues.push({ field: 'waitUntil', message: 'must be a function' });
  }
  if (now !== undefined && typeof now !== 'function')
    issues.push({ field: 'now', message: 'must be a function' });
  if (options.clock !== undefined && typeof options.clock !== 'function')
    issues.push({ field: 'clock', message: 'must be a function' });
  return issues;
}

/** The bot's client; its option issues are reported with the bot's. @internal */
export function createClient(options: BotOptions, issues: FieldIssue[]): AgentClient {
  const { apiKey, baseUrl, timeoutMs, maxRetries, fetch, logger } = options;
  try {
    return new AgentClient({ apiKey, baseUrl, timeoutMs, maxRetries, fetch, logger });
  } catch (error) {
    if (!ValidationError.is(error)) throw error;
    throw new ValidationError([...issues, ...error.issues], 'createBot');
  }
}
