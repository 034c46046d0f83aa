// createBot: typed handlers over verified deliveries, served by a Web-standard `fetch`.

import * as z from 'zod/mini';
import { AgentClient } from '../client/agent-client.js';
import { ValidationError } from '../core/errors.js';
import { fn } from '../core/validate.js';
import { type FieldIssue, fieldIssues, safeParse } from '../schemas/issues.js';
import type { BotStore } from '../store/bot-store.js';
import { createMemoryStore } from '../store/memory-store.js';
import { debugLog, logAt } from './bot-log.js';
import type { Bot, BotErrorInfo, BotOptions, BotRuntime } from './bot-types.js';
import {
  createEarlyRuns,
  createTracker,
  type DeliveryDeps,
  deliveryHandler,
  fetchHandler,
} from './delivery.js';
import { createLanes, DEFAULT_GAP_WAIT_MS } from './lanes.js';
import { createRun } from './message-context.js';
import { createQuestions } from './questions.js';
import { checkHandler, createRouter } from './router.js';
import { createDeadlines, within } from './timers.js';
import { DEFAULT_TOLERANCE_SEC, secretSigners } from './verify.js';

/** How long a delivery waits for its handlers before answering 409 (retry later), under the service's 10 s timeout. */
export const DEFAULT_ACK_TIMEOUT_MS = 8000;

/**
 * How long a conversation's lock, an in-flight claim and a reply's writer lease live without a
 * renewal. Under the service's first retry (5 s after a failed delivery), so a killed instance's are
 * gone by then and that retry runs the message; renewals every second keep a live holder's through a
 * stall or store pause of up to 3.5 s.
 */
const DEFAULT_LOCK_TTL_MS = 4500;
/** The longest a handler may run before its signal fires and its conversation moves on. */
const DEFAULT_MAX_HANDLER_MS = 10 * 60 * 1000;
/** How many failed runs of one message are tried before it is given up. */
const DEFAULT_MAX_ATTEMPTS = 3;
/** How long `bot.close()` lets running handlers go on, inside Kubernetes' default 30 s grace period. */
const DEFAULT_CLOSE_DEADLINE_MS = 25_000;
/** How long `bot.close()` still waits, after the deadline fired their signals, for handlers to end. */
const CLOSE_GRACE_MS = 2000;

/** How long 'debounce' gathers messages before one handler answers them together. */
const DEFAULT_DEBOUNCE_MS = 1000;

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
  // Checked by the client the bot makes (clientOf below) and by secretSigners.
  const checkedElsewhere = z.optional(z.unknown());

  return z.strictObject({
    apiKey: checkedElsewhere,
    baseUrl: checkedElsewhere,
    timeoutMs: checkedElsewhere,
    maxRetries: checkedElsewhere,
    maxResponseBytes: checkedElsewhere,
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
    now: z.optional(fn()),
    clock: z.optional(fn()),
  });
}

let botOptions: ReturnType<typeof botOptionsSchema> | undefined;

/**
 * A bot: verified webhooks, typed handlers, replies from a handler. Serve `bot.fetch` on any
 * Web-standard runtime, `toNodeHandler(bot)` from `agent-messaging/node` on Node, or hand a
 * delivery's raw body and headers to `bot.handleDelivery` from any other server.
 *
 * @example
 * const bot = createBot({ apiKey, webhookSecret, baseUrl });
 * bot.on('message.received', (ctx) => ctx.reply(`You said: ${ctx.text}`));
 * export default { fetch: bot.fetch };
 */
export function createBot(options: BotOptions): Bot {
  if (typeof options !== 'object' || options === null) {
    throw new ValidationError([{ field: 'options', message: 'must be an object' }], 'createBot');
  }
  botOptions ??= botOptionsSchema();
  const checked = safeParse(botOptions, options);
  const issues: FieldIssue[] = [];
  // Each secret's key is prepared here once, not per delivery.
  const signers = secretSigners(options.webhookSecret, 'webhookSecret', issues);
  if (!checked.success) issues.push(...fieldIssues(checked.error));
  const client = clientOf(options, issues);
  if (!client || issues.length > 0) throw new ValidationError(issues, 'createBot');

  const errorHandlers: ((error: unknown, info: BotErrorInfo) => unknown)[] = [];
  const { logger, clock } = options;
  const store = options.store ?? createMemoryStore();
  const lockTtlMs = options.lockTtlMs ?? DEFAULT_LOCK_TTL_MS;
  // What the deliveries started, until it ended (bot.idle()).
  const work = createTracker();
  const runtime: BotRuntime = {
    client,
    store,
    lockTtlMs,
    nowMs: clock ? () => clock().getTime() : Date.now,
    warn: (message, fields) => logAt(logger, 'warn', message, fields),
    report(error, event, webhookId) {
      const info: BotErrorInfo = { ...(event ? { event } : {}), ...(webhookId ? { webhookId } : {}) };
      if (errorHandlers.length === 0) {
        return logAt(logger, 'error', 'a webhook handler failed', { webhookId, type: event?.type, error });
      }
      for (const handler of errorHandlers) {
        // An error handler that fails is logged, never thrown back into the delivery.
        Promise.resolve()
          .then(() => handler(error, info))
          .catch((failure: unknown) =>
            logAt(logger, 'error', 'an onError handler failed', { error: failure }),
          );
      }
    },
    track: work.track,
  };
  const questions = createQuestions(runtime);
  // The router asks the questions first once one is declared (bot.question).
  const router = createRouter();
  const run = createRun(runtime, router.dispatch, questions, options.session);
  const lanes = createLanes({
    store,
    policy: options.concurrency ?? 'queue',
    // An in-flight claim lives one lock TTL past its last renewal (lanes.ts says who renews it).
    lockTtlMs,
    maxHandlerMs: options.maxHandlerMs ?? DEFAULT_MAX_HANDLER_MS,
    debounceMs: options.debounceMs ?? DEFAULT_DEBOUNCE_MS,
    maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    gapWaitMs: options.gapWaitMs ?? DEFAULT_GAP_WAIT_MS,
    history: async (conversationId, query, signal) =>
      (await client.conversations.listMessages(conversationId, query, { signal })).messages,
    run,
    report: runtime.report,
    debug: debugLog(logger),
  });

  const ackTimeoutMs = options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS;
  // Set by bot.close(): the deliveries, the lanes and the question timer wind down.
  let closed: Promise<void> | undefined;
  // Plain values and the owning files' functions: a delivery runs no code of this file.
  const deps: DeliveryDeps = {
    closing: false,
    // Its options were checked above, with the bot's.
    verification: { signers, toleranceSec: options.toleranceSec ?? DEFAULT_TOLERANCE_SEC, now: options.now },
    ack: options.ack ?? 'after-handler',
    ackTimeoutMs,
    acks: createDeadlines(ackTimeoutMs, true),
    early: createEarlyRuns(),
    admit: lanes.admit,
    work,
    waitUntil: options.waitUntil,
    report: runtime.report,
    warn: runtime.warn,
  };

  /** Winds down: nothing new starts, runs get until the deadline, then their signals fire. */
  const closeBot = async (deadline: number) => {
    lanes.close();
    questions.stop();
    const ended = bot.idle();
    if ((await within(ended, createDeadlines(deadline, true))) !== 'timeout') return;
    logAt(logger, 'warn', 'bot.close: handlers still running at the deadline were stopped', { deadline });
    lanes.stopAll();
    // A handler that ignores its signal is not waited for past a short grace.
    await within(ended, createDeadlines(CLOSE_GRACE_MS, true));
  };

  // The one entry: bot.fetch and toNodeHandler read a delivery's body and hand it here.
  const handleDelivery = deliveryHandler(deps);

  // Each registration answers the bot, so that they chain.
  const chained =
    <A extends unknown[]>(register: (...args: A) => void) =>
    (...args: A) => {
      register(...args);
      return bot;
    };
  const bot: Bot = {
    client,
    on: chained(router.on),
    onAny: chained(router.onAny),
    use: chained(router.use),
    command: chained(router.command),
    hears: chained(router.hears),
    action: chained(router.action),
    question: chained((name: unknown, definition: unknown) => {
      questions.declare(name, definition);
      router.answerWith(questions.take);
    }),
    fireDueQuestions: () => questions.fireDue(),
    onError: chained((handler: unknown) => {
      checkHandler(handler, 'bot.onError');
      errorHandlers.push(handler as (typeof errorHandlers)[number]);
    }),
    idle: work.idle,
    close(closeOptions = {}) {
      const deadline = closeOptions.deadline ?? DEFAULT_CLOSE_DEADLINE_MS;
      if (!Number.isInteger(deadline) || deadline < 0) {
        throw new ValidationError(
          [{ field: 'deadline', message: 'must be a non-negative integer (milliseconds)' }],
          'bot.close',
        );
      }
      deps.closing = true;
      closed ??= closeBot(deadline);
      return closed;
    },
    handleDelivery,
    fetch: fetchHandler(handleDelivery),
  };
  return bot;
}

/** The bot's client; its option issues are added to the bot's, and without a client there is none. */
function clientOf(options: BotOptions, issues: FieldIssue[]): AgentClient | undefined {
  const { apiKey, baseUrl, timeoutMs, maxRetries, maxResponseBytes, fetch, logger } = options;
  try {
    return new AgentClient({ apiKey, baseUrl, timeoutMs, maxRetries, maxResponseBytes, fetch, logger });
  } catch (error) {
    if (!ValidationError.is(error)) throw error;
    issues.push(...error.issues);
    return undefined;
  }
}
