// createBot: typed handlers over verified deliveries, served by a Web-standard `fetch`.

import { ValidationError } from '../core/errors.js';
import type { MessageReceivedEvent, WebhookEvent } from '../schemas/webhooks.js';
import { logAt } from './bot-log.js';
import { checkOptions, createClient } from './bot-options.js';
import type { Bot, BotErrorInfo, BotOptions, EventContext, Handler } from './bot-types.js';
import { createMemoryDedupeStore } from './dedupe-store.js';
import { handleDelivery } from './delivery.js';
import { createMessageContext } from './message-context.js';

/** How long a delivery waits for its handlers before answering 202, under the service's 10 s timeout. */
export const DEFAULT_ACK_TIMEOUT_MS = 8000;

/**
 * A bot: verified webhooks, typed handlers, replies from a handler. Serve `bot.fetch` on any
 * Web-standard runtime, or `toNodeHandler(bot)` from `agent-messaging/node` on Node.
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

  const handlers = new Map<string, Handler<never>[]>();
  const anyHandlers: Handler<EventContext>[] = [];
  const errorHandlers: ((error: unknown, info: BotErrorInfo) => unknown)[] = [];
  const { logger } = options;

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

  const run = async (event: WebhookEvent, webhookId: string) => {
    let ctx: EventContext = { event, webhookId, client };
    let finish: (() => Promise<void>) | undefined;
    if (event.type === 'message.received') {
      const warn = (error: unknown) => logAt(logger, 'warn', 'a typing call failed', { webhookId, error });
      const made = createMessageContext({
        event: event as MessageReceivedEvent,
        webhookId,
        client,
        typingRenewMs: options.typingRenewMs,
        warn,
      });
      ctx = made.ctx as EventContext;
      finish = made.finish;
    }
    try {
      for (const handler of handlers.get(event.type) ?? []) await (handler as Handler<EventContext>)(ctx);
      for (const handler of anyHandlers) await handler(ctx);
    } finally {
      await finish?.();
    }
  };

  const deps = {
    secrets: ([] as string[]).concat(options.webhookSecret),
    toleranceSec: options.toleranceSec,
    now: options.now,
    store: options.dedupe ?? createMemoryDedupeStore(),
    ack: options.ack ?? 'after-handler',
    ackTimeoutMs: options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS,
    run,
    report,
    warn: (message: string, fields: Record<string, string>) => logAt(logger, 'warn', message, fields),
  };

  const bot: Bot = {
    client,
    on(type, handler) {
      if (typeof type !== 'string' || typeof handler !== 'function') {
        throw new ValidationError(
          [{ field: 'handler', message: 'on(type, handler) takes a string and a function' }],
          'bot.on',
        );
      }
      handlers.set(type, [...(handlers.get(type) ?? []), handler as Handler<never>]);
      return bot;
    },
    onAny(handler) {
      if (typeof handler !== 'function')
        throw new ValidationError([{ field: 'handler', message: 'must be a function' }], 'bot.onAny');
      anyHandlers.push(handler);
      return bot;
    },
    onError(handler) {
      if (typeof handler !== 'function')
        throw new ValidationError([{ field: 'handler', message: 'must be a function' }], 'bot.onError');
      errorHandlers.push(handler);
      return bot;
    },
    fetch: (request, _env, executionCtx) => {
      const fromCtx = executionCtx?.waitUntil;
      // Workers check `this` on waitUntil, so it is called as a method of its ctx.
      const waitUntil =
        typeof fromCtx === 'function'
          ? (p: Promise<unknown>) => fromCtx.call(executionCtx, p)
          : options.waitUntil;
      return handleDelivery(request, deps, waitUntil);
    },
  };
  return bot;
}
