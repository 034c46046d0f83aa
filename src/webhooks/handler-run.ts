// One run of the handlers: the context built from the batch (the newest delivery is the event, all
// of them are `ctx.messages`), then the router, then the cleanup every run gets (typing stopped).

import type { AgentClient } from '../client/agent-client.js';
import type { MessageReceivedEvent, WebhookEvent } from '../schemas/webhooks.js';
import type { BotStore } from '../store/bot-store.js';
import type { EventContext, MessageContext } from './bot-types.js';
import type { Addressing } from './conversation-kind.js';
import { createMessageContext } from './message-context.js';

/** What a run needs from the bot. @internal */
export interface RunDeps {
  client: AgentClient;
  store: BotStore;
  typingRenewMs: number | undefined;
  dispatch(ctx: EventContext): Promise<void>;
  /** At once when known, a promise when the service must be asked. */
  addressing(event: MessageReceivedEvent): Addressing | Promise<Addressing>;
  warn(message: string, fields: Record<string, unknown>): void;
  /** Wraps the dispatch of a message with per-conversation state (sessions); optional. */
  around?(ctx: MessageContext, run: () => Promise<void>): Promise<void>;
}

/** Builds the `run` the batches call. @internal */
export function createRun(deps: RunDeps) {
  const { client } = deps;
  return async (items: readonly { webhookId: string; event: WebhookEvent }[], signal: AbortSignal) => {
    const last = items.at(-1);
    if (!last) return;
    const { event, webhookId } = last;
    if (event.type !== 'message.received') {
      await deps.dispatch({ event, webhookId, client, signal });
      return;
    }
    const received = event as MessageReceivedEvent;
    const known = deps.addressing(received);
    const made = createMessageContext({
      event: received,
      webhookId,
      client,
      store: deps.store,
      signal,
      batch:
        items.length === 1
          ? [received.message]
          : items.map((item) => (item.event as MessageReceivedEvent).message),
      addressing: known instanceof Promise ? await known : known,
      typingRenewMs: deps.typingRenewMs,
      // Sessions are the one `around` step: without it no state is loaded, and ctx.session says so.
      sessions: deps.around !== undefined,
      warn: deps.warn,
    });
    const ctx = made.ctx as EventContext;
    try {
      await (deps.around ? deps.around(made.ctx, () => deps.dispatch(ctx)) : deps.dispatch(ctx));
    } finally {
      const finishing = made.finish();
      if (finishing) await finishing;
    }
  };
}
