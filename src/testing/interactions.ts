import { type AgentCaller, agentMessage, conversationFor, requireActive } from './access.js';
import { invalid, type JsonAnswer, json, notFound } from './http.js';
import { messageChanged } from './live-feed.js';
import { endpoint, type RouteContext } from './router.js';

/** How long a typing `start` lasts. */
const TYPING_MS = 10_000;

/** `POST /v1/conversations/{id}/typing`: `start` lasts 10 s; `stop` expires now. */
export const typing = endpoint('conversations.typing', {
  handle: (ctx) => {
    const { agent } = ctx.caller;
    const conversation = conversationFor(ctx.world.state, agent.id, ctx.params.conversation_id ?? '');
    requireActive(agent);
    const now = ctx.world.clock.nowMs();
    const expires = ctx.body.state === 'start' ? now + TYPING_MS : now;
    const answer = {
      conversation_id: conversation.id,
      state: ctx.body.state,
      expires_at: new Date(expires).toISOString(),
    };
    ctx.world.events.emit(() => ({ type: 'typing', ...answer, actor_id: agent.id }));
    return json(200, answer);
  },
});

/** Sets `delivered_at` or `read_at` once; a repeat answers the first time. */
function mark(
  ctx: RouteContext<unknown, AgentCaller>,
  messageId: string,
  type: 'delivered' | 'read',
): JsonAnswer {
  const { agent } = ctx.caller;
  const conversation = conversationFor(ctx.world.state, agent.id, ctx.params.conversation_id ?? '');
  const message = conversation.messages.find((candidate) => candidate.id === messageId);
  if (!message) throw notFound(`message ${messageId} in conversation ${conversation.id}`);
  requireActive(agent);
  if (message.sender_id === agent.id)
    throw invalid('message_id: receipts apply to messages of another sender');
  const field = type === 'read' ? 'read_at' : 'delivered_at';
  // A repeat changes nothing, so it is no update; a message read is delivered by then too.
  const first = message[field] === null;
  message[field] ??= ctx.world.clock.now();
  const at = message[field];
  message.delivered_at ??= at;
  if (first) messageChanged(ctx.world, message, 'updated');
  return json(200, { message_id: message.id, type, at: at.toISOString() });
}

/** `POST /v1/conversations/{id}/receipts`. */
export const sendReceipt = endpoint('conversations.sendReceipt', {
  handle: (ctx) => mark(ctx, ctx.body.message_id, ctx.body.type),
});

/** `POST /v1/conversations/{id}/read`. */
export const markRead = endpoint('conversations.markRead', {
  handle: (ctx) => mark(ctx, ctx.body.message_id, 'read'),
});

/** `POST /v1/messages/{id}/reactions`: `add` keeps one per actor and emoji; `remove` is always 200. */
export const react = endpoint('messages.react', {
  handle: (ctx) => {
    const message = agentMessage(ctx);
    if (message.status === 'deleted') throw notFound(`message ${message.id} (it was unsent)`);
    const { emoji, action } = ctx.body;
    const actor_id = ctx.caller.id;
    const index = message.reactions.findIndex((r) => r.emoji === emoji && r.actor_id === actor_id);
    // One reaction per actor and emoji: adding it again, or removing a missing one, changes nothing.
    const changed = action === 'add' ? index === -1 : index !== -1;
    if (changed && action === 'add') message.reactions.push({ part_index: 0, emoji, actor_id });
    if (changed && action === 'remove') message.reactions.splice(index, 1);
    if (changed) messageChanged(ctx.world, message, 'updated');
    return json(200, { message_id: message.id, emoji, action, at: ctx.world.clock.now().toISOString() });
  },
});
