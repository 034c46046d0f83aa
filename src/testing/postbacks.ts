// A user's click on a quick reply (PROTOCOL.md section 14): the click posts the action's label as a
// user message replying to the actions block, and its delivery carries `postback`.
import type { Message } from '../schemas/messages.js';
import { ClickActionRequest } from '../schemas/mock-control.js';
import { conversationFor } from './access.js';
import { checkJson } from './body.js';
import { invalid, notFound } from './http.js';
import { postAsUser } from './user-messages.js';
import type { MockWorld } from './world.js';

interface StoredAction {
  actionId?: unknown;
  label?: unknown;
  behavior?: { type?: unknown; value?: unknown };
}

/**
 * The user clicks `action_id` of message `message_id`: 404 for an unknown user, conversation,
 * message or action, 400 for an action that is not a postback (a consent card's accept is the
 * accept call of section 12, never a postback).
 */
export function clickAction(
  world: MockWorld,
  conversationId: string,
  input: ClickActionRequest,
): { message: Message } {
  const { user_id, message_id, action_id } = checkJson(ClickActionRequest, input, 'click');
  const { state } = world;
  if (!state.users.has(user_id)) throw notFound(`user_id: user ${user_id}`);
  const conversation = conversationFor(state, user_id, conversationId);
  const target = conversation.messages.find((message) => message.id === message_id);
  if (!target || target.status === 'deleted') {
    throw notFound(`message_id: message ${message_id} in conversation ${conversation.id}`);
  }
  for (const [partIndex, block] of target.blocks.entries()) {
    if (block.type !== 'actions') continue;
    const action = (block.actions as StoredAction[] | undefined)?.find((a) => a.actionId === action_id);
    if (!action) continue;
    const { behavior } = action;
    if (
      behavior?.type !== 'postback' ||
      typeof behavior.value !== 'string' ||
      isConsentAccept(world, behavior.value)
    ) {
      throw invalid(`action_id: ${action_id} is not a postback action`);
    }
    const message = postAsUser(world, conversation, {
      userId: user_id,
      text: String(action.label),
      replyTo: { message_id: target.id, part_index: partIndex },
      postback: { actionId: action_id, value: behavior.value, messageId: target.id },
    });
    return { message };
  }
  throw notFound(`action_id: action ${action_id} in message ${message_id}`);
}

// The invite's consent card posts `accept:<invite id>` (invites.ts); accepting goes through section 12.
function isConsentAccept(world: MockWorld, value: string): boolean {
  return value.startsWith('accept:') && world.state.invites.has(value.slice('accept:'.length));
}
