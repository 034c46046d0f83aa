// The delivery a Chat SDK handler is answering. Every reply it posts takes a key derived from the
// delivery's webhook-id and the reply's position in the handler, so the service's redelivery of the
// same event (up to about 18 hours later) replays those replies instead of posting them twice.

import { AsyncLocalStorage } from 'node:async_hooks';
import { idempotencyKeyFor } from '../core/idempotency.js';

interface Turn {
  webhookId: string;
  posts: number;
}

const turns = new AsyncLocalStorage<Turn>();

/** Runs `work` as the handling of delivery `webhookId`. */
export function inTurn<T>(webhookId: string, work: () => Promise<T>): Promise<T> {
  return turns.run({ webhookId, posts: 0 }, work);
}

/**
 * The Idempotency-Key of the next post of the current turn, or `undefined` outside one (a post
 * made on its own, which then gets a fresh key from the client).
 */
export function nextPostKey(): string | undefined {
  const turn = turns.getStore();
  if (!turn) return undefined;
  turn.posts += 1;
  return idempotencyKeyFor(turn.webhookId, `chat-sdk:post:${turn.posts}`);
}
