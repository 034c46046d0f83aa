import { agentOf, messageFor, requireActive } from './access.js';
import { forbidden, json } from './http.js';
import { appendText, completeMessage } from './message-store.js';
import { endpoint, type RouteContext } from './router.js';
import type { MessageRecord } from './state.js';

/** The agent's own message, for a change: 404 outside membership, 403 when inactive or another sender's. */
function ownMessage(ctx: RouteContext): MessageRecord {
  const agent = agentOf(ctx);
  const { message } = messageFor(
    ctx.world.state,
    { kind: 'agent', id: agent.id, agent },
    ctx.params.message_id ?? '',
  );
  requireActive(agent);
  if (message.sender_id !== agent.id) throw forbidden('only the sender of a message may change it');
  return message;
}

/** `POST /v1/messages/{id}/blocks/{blk}/append`: answers the new revision. */
export const append = endpoint('messages.append', {
  handle: (ctx) => {
    const message = ownMessage(ctx);
    const blockId = ctx.params.block_id ?? '';
    const revision = appendText(ctx.world, message, blockId, ctx.body.value);
    return json(200, { message_id: message.id, block_id: blockId, revision });
  },
});

/** `POST /v1/messages/{id}/complete`: 409 `message_not_streaming` once it is no longer streaming. */
export const complete = endpoint('messages.complete', {
  handle: (ctx) => {
    const message = ownMessage(ctx);
    const revision = completeMessage(ctx.world, message, ctx.body.fallbackText);
    return json(200, { message_id: message.id, status: message.status, revision });
  },
});
