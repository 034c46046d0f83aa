// createBot: typed handlers over verified deliveries, served by a Web-standard `fetch`.

import { ValidationError } from '../core/errors.js';
import { sleep } from '../core/retry.js';
import type { WebhookEvent } from '../schemas/webhooks.js';
import { createMemoryStore } from '../store/memory-store.js';
import { debugLog, logAt } from './bot-log.js';
import { checkOptions, createClient } from './bot-options.js';
import type { Bot, BotErrorInfo, BotOptions } from './bot-types.js';
import { createEarlyRuns } from './dedupe.js';
import { createTracker, type DeliveryDeps, deliveryHandler, fetchHandler } from './delivery.js';
import { createLanes, DEFAULT_GAP_WAIT_MS } from './lanes.js';
import { createKindCache, createRun, type RunDeps } from './message-context.js';
import { createQuestions } from './questions.js';
import { createRouter, type RouterOptions } from './router.js';
import { createSessions } from './session.js';
import { createDeadlines } from './timers.js';
import { prepareVerification } from './verify.js';

/** How long a delivery waits for its handlers before answering 409 (retry later), under the service's 10 s timeout. */
export const DEFAULT_ACK_TIMEOUT_MS = 8000;

/**
 * How long a conversation's lock, an in-flight claim and a reply's writer lease live without a
 * renewal. Under the service's first retry (5 s after a failed delivery), so a killed instance's are
 * gone by then and that retry runs the message; renewals every second keep a live holder's through a
 * stall or store pause of up to 3.5 s.
 */
export const DEFAULT_LOCK_TTL_MS = 4500;
/** The longest a handler may run before its signal fires and its conversation moves on. */
export const DEFAULT_MAX_HANDLER_MS = 10 * 60 * 1000;
/** How many failed runs of one message are tried before it is given up. */
export const DEFAULT_MAX_ATTEMPTS = 3;
/** How long `bot.close()` lets running handlers go on, inside Kubernetes' default 30 s grace period. */
const DEFAULT_CLOSE_DEADLINE_MS = 25_000;
/** How long `bot.close()` still waits, after the deadline fired their signals, for handlers to end. */
const CLOSE_GRACE_MS = 2000;

/** How long 'debounce' gathers messages before one handler answers them together. */
export const DEFAULT_DEBOUNCE_MS = 1000;

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
  const issues = checkOptions(options);
  const client = createClient(options, issues);
  if (issues.length > 0) throw new ValidationError(issues, 'createBot');

  // The router asks the questions first once one is declared (bot.question sets its answer step).
  const routing: RouterOptions = {};
  const router = createRouter(routing);
  const errorHandlers: ((error: unknown, info: BotErrorInfo) => unknown)[] = [];
  const { logger } = options;
  const store = options.store ?? createMemoryStore();

  const report = (error: unknown, event: WebhookEvent | undefined, webhookId: string | undefined) => {
    const info: BotErrorInfo = { ...(event ? { event } : {}), ...(webhookId ? { webhookId } : {}) };
    if (errorHandlers.length === 0) {
      return logAt(logger, 'error', 'a webhook handler failed', { webhookId, type: event?.type, error });
    }
    for (const handler of errorHandlers) {
      // An error handler that fails is logged, never thrown back into the delivery.
      Promise.resolve()
        .then(() => handler(error, info))
        .catch((failure: unknown) => logAt(logger, 'error', 'an onError handler failed', { error: failure }));
    }
  };

  const lockTtlMs = options.lockTtlMs ?? DEFAULT_LOCK_TTL_MS;
  // What the deliveries started, until it ended (bot.idle()).
  const work = createTracker();
  // `attach` is set by the first bot.question: a bot without questions runs no question code per message.
  const runDeps: RunDeps = {
    client,
    store,
    writerLeaseMs: lockTtlMs,
    typingRenewMs: options.typingRenewMs,
    dispatch: router.dispatch,
    addressing: createKindCache(client),
    warn: (message, fields) => logAt(logger, 'warn', message, fields),
    // Only a bot that asked for sessions reads (and compare-and-sets) one per message.
    ...(options.session ? { around: createSessions(store, options.session) } : {}),
  };
  const run = createRun(runDeps);

  // Made by every bot: what it costs before a question is declared is a map and a closure.
  const { clock } = options;
  const questions = createQuestions({
    store,
    client,
    nowMs: clock ? () => clock().getTime() : Date.now,
    leaseMs: lockTtlMs,
    typingRenewMs: options.typingRenewMs,
    report: (error) => report(error, undefined, undefined),
    warn: (message, fields) => logAt(logger, 'warn', message, fields),
    track: work.track,
  });
  const lanes = createLanes({
    store,
    policy: options.concurrency ?? 'queue',
    // An in-flight claim lives one lock TTL past its last renewal (dedupe.ts says who renews it).
    lockTtlMs,
    maxHandlerMs: options.maxHandlerMs ?? DEFAULT_MAX_HANDLER_MS,
    debounceMs: options.debounceMs ?? DEFAULT_DEBOUNCE_MS,
    maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    gapWaitMs: options.gapWaitMs ?? DEFAULT_GAP_WAIT_MS,
    history: async (conversationId, query, signal) =>
      (await client.conversations.listMessages(conversationId, query, { signal })).messages,
    run,
    report,
    debug: debugLog(logger),
  });

  // Checked by checkOptions above; each secret's key is prepared here once, not per delivery.
  const verification = prepareVerification({
    secret: ([] as string[]).concat(options.webhookSecret),
    ...(options.toleranceSec === undefined ? {} : { toleranceSec: options.toleranceSec }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const ackTimeoutMs = options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS;
  // Set by bot.close(): the deliveries, the lanes and the question timer wind down.
  let closed: Promise<void> | undefined;
  // Plain values and the owning files' functions: a delivery runs no code of this file.
  const deps: DeliveryDeps = {
    closing: false,
    verification,
    ack: options.ack ?? 'after-handler',
    ackTimeoutMs,
    acks: createDeadlines(ackTimeoutMs, true),
    early: createEarlyRuns(),
    admit: lanes.admit,
    work,
    waitUntil: options.waitUntil,
    report,
    warn: (message: string, fields: Record<string, string>) => logAt(logger, 'warn', message, fields),
  };

  /** Winds down: nothing new starts, runs get until the deadline, then their signals fire. */
  const closeBot = async (deadline: number) => {
    lanes.close();
    questions.stop();
    const ended = bot.idle();
    const timer = new AbortController();
    const past = (ms: number) =>
      sleep(ms, timer.signal).then(
        () => 'past' as const,
        () => 'past' as const,
      );
    try {
      if ((await Promise.race([ended.then(() => 'ended' as const), past(deadline)])) === 'ended') return;
      logAt(logger, 'warn', 'bot.close: handlers still running at the deadline were stopped', { deadline });
      lanes.stopAll();
      // A handler that ignores its signal is not waited for past a short grace.
      await Promise.race([ended, past(CLOSE_GRACE_MS)]);
    } finally {
      timer.abort();
    }
  };

  // The one entry: bot.fetch and toNodeHandler read a delivery's body and hand it here.
  const handleDelivery = deliveryHandler(deps);

  const bot: Bot = {
    client,
    on(type, handler) {
      router.on(type, handler);
      return bot;
    },
    onAny(handler) {
      router.onAny(handler);
      return bot;
    },
    use(middleware) {
      router.use(middleware);
      return bot;
    },
    command(name, handler) {
      router.command(name, handler);
      return bot;
    },
    hears(pattern, handler) {
      router.hears(pattern, handler);
      return bot;
    },
    action(pattern, handler) {
      router.action(pattern, handler);
      return bot;
    },
    question(name, definition) {
      questions.declare(name, definition);
      routing.answer = questions.take;
      runDeps.attach = questions.attach;
      return bot;
    },
    fireDueQuestions: () => questions.fireDue(),
    onError(handler) {
      if (typeof handler !== 'function')
        throw new ValidationError([{ field: 'handler', message: 'must be a function' }], 'bot.onError');
      errorHandlers.push(handler);
      return bot;
    },
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
