// Checks of createBot's options, all reported together in one ValidationError naming each field.

import * as z from 'zod/mini';
import { AgentClient } from '../client/agent-client.js';
import { ValidationError } from '../core/errors.js';
import { fn } from '../core/validate.js';
import { type FieldIssue, fieldIssues, safeParse } from '../schemas/issues.js';
import type { BotStore } from '../store/bot-store.js';
import type { BotOptions } from './bot-types.js';
import { secretIssues } from './verify.js';

const storeMethods = [
  'setIfAbsent',
  'get',
  'set',
  'compareAndSet',
  'acquireLock',
  'renewLock',
  'admit',
  'settle',
] as const;

/**
 * Every option createBot takes (a misspelt one is refused by name): its own and its client's. Made at
 * the first createBot, so an app that imports only the client bundles none of it.
 */
function botOptionsSchema() {
  // An optional finite number that `ok` accepts, refused with `error` otherwise.
  const number = (ok: (value: number) => boolean, error: string) =>
    z.optional(z.custom<number>((v) => typeof v === 'number' && Number.isFinite(v) && ok(v), { error }));
  const positiveMs = number((v) => v > 0, 'must be a positive number of milliseconds');
  const ms = number((v) => v >= 0, 'must be a number of milliseconds >= 0');
  // Checked by the client the bot makes (createClient below) and by secretIssues.
  const checkedElsewhere = z.optional(z.unknown());

  return z.strictObject({
    apiKey: checkedElsewhere,
    baseUrl: checkedElsewhere,
    timeoutMs: checkedElsewhere,
    maxRetries: checkedElsewhere,
    fetch: checkedElsewhere,
    logger: checkedElsewhere,
    webhookSecret: checkedElsewhere,
    ack: z.optional(z.enum(['after-handler', 'immediately'])),
    ackTimeoutMs: ms,
    store: z.optional(
      z.custom((store) => storeMethods.every((name) => typeof (store as BotStore)?.[name] === 'function'), {
        error: 'must be a BotStore (createMemoryStore() or createRedisStore())',
      }),
    ),
    concurrency: z.optional(z.enum(['queue', 'interrupt', 'debounce', 'concurrent'])),
    session: z.optional(z.object({ ttlMs: positiveMs, initial: z.optional(fn()) })),
    debounceMs: positiveMs,
    lockTtlMs: positiveMs,
    maxHandlerMs: positiveMs,
    maxAttempts: number((v) => Number.isInteger(v) && v >= 1, 'must be an integer >= 1'),
    gapWaitMs: ms,
    toleranceSec: number((v) => v >= 0, 'must be a number of seconds >= 0'),
    waitUntil: z.optional(fn()),
    typingRenewMs: positiveMs,
    now: z.optional(fn()),
    clock: z.optional(fn()),
  });
}

let botOptions: ReturnType<typeof botOptionsSchema> | undefined;

/** The issues of the bot's own options. @internal */
export function checkOptions(options: BotOptions): FieldIssue[] {
  botOptions ??= botOptionsSchema();
  const checked = safeParse(botOptions, options);
  const issues = secretIssues(options.webhookSecret, 'webhookSecret');
  return checked.success ? issues : [...issues, ...fieldIssues(checked.error)];
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
