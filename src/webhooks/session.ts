// ctx.session: per-conversation state in the bot store, loaded before the handlers and saved after
// them with compare-and-set. Two runs that loaded the same state cannot both save: the second gets a
// SessionConflictError (nothing is re-run by the SDK; the delivery fails, so the service's retry runs
// the handler again on the state the first one saved). A run that failed saves nothing.

import { AgentMessagingError } from '../core/errors.js';
import type { BotStore } from '../store/bot-store.js';
import type { MessageContext } from './bot-types.js';

/** The state `ctx.session` holds: any JSON object. */
export type BotSession = Record<string, unknown>;

/** Options of sessions (`createBot({ session })`). */
export interface SessionOptions {
  /** How long a conversation's session lives after its last save, in milliseconds; 30 days by default. */
  ttlMs?: number;
  /** The state of a conversation with no session yet; `{}` by default. */
  initial?: () => BotSession;
}

/** 30 days. */
export const DEFAULT_SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Another run saved the conversation's session after this run loaded it; this run's changes were not
 * saved. The delivery is answered 500, so the service's retry runs the handler on the newer state.
 */
export class SessionConflictError extends AgentMessagingError {
  static override readonly kind: string = 'SessionConflictError';
  /** The conversation whose session changed under the run. */
  readonly conversationId: string;

  constructor(conversationId: string) {
    super(
      `The session of conversation ${conversationId} was saved by another run first; this run's changes were not saved.`,
    );
    this.conversationId = conversationId;
  }
}

/** Loads `ctx.session`, runs, saves it when it changed. @internal */
export function createSessions(store: BotStore, options: SessionOptions = {}) {
  const ttlMs = options.ttlMs ?? DEFAULT_SESSION_TTL_MS;
  const initial = options.initial ?? (() => ({}));
  return async (ctx: MessageContext, run: () => Promise<void>): Promise<void> => {
    const key = `session:${ctx.conversationId}`;
    const loaded = await store.get(key);
    ctx.session = loaded === undefined ? initial() : (JSON.parse(loaded) as BotSession);
    await run();
    // The handler may have replaced the object as well as changed it.
    const next = JSON.stringify(ctx.session ?? {});
    if (next === (loaded ?? JSON.stringify(initial()))) return;
    if (!(await store.compareAndSet(key, loaded, next, ttlMs)))
      throw new SessionConflictError(ctx.conversationId);
  };
}
