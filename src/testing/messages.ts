// Messages (PROTOCOL.md section 7): the non-streaming send, history paging, and unsend.
import { ListMessagesQuery } from '../schemas/conversations.js';
import type { SendMessageRequest } from '../schemas/messages.js';
import { agentOf, conversationFor, messageFor, requireActive } from './access.js';
import { checkJson } from './body.js';
import { forbidden, invalid, json, MockError } from './http.js';
import { newId } from './ids.js';
import { messageUpdated } from './live-events.js';
import { createMessage } from './message-store.js';
import { messageView, newestFirst, sendBlock, tombstoneView } from './message-view.js';
import { endpoint } from './router.js';
import type { AgentRecord, BlockRecord, ConversationRecord, MockState } from './state.js';
import { startStreamingSend } from './streaming.js';

/** The unsend window: 120 s after `created_at`. */
export const UNSEND_WINDOW_MS = 120_000;

type SendBody = ReturnType<typeof SendMessageRequest.parse>;

/** Stored blocks for a send: ids checked or assigned, attachments checked as uploaded. */
export function toBlocks(state: MockState, agent: AgentRecord, content: SendBody['content']): BlockRecord[] {
  const seen = new Set<string>();
  return content.map((block, index) => {
    const id = block.id ?? newId('blk');
    if (seen.has(id)) throw invalid(`content[${index}].id: repeats block id ${id}`);
    seen.add(id);
    if (block.type === 'text') return { id, type: 'text', text: block.text };
    if (block.type === 'actions')
      return { id, type: 'actions', layout: block.layout, actions: block.actions };
    const attachment = state.attachments.get(block.attachmentId);
    if (!attachment || attachment.agent_id !== agent.id || !attachment.bytes) {
      throw invalid(`content[${index}].attachmentId: ${block.attachmentId} has no completed upload`);
    }
    return { id, type: block.type, attachmentId: block.attachmentId };
  });
}

/** The send's reply target must be a message of the same conversation. */
export function checkReplyTo(conversation: ConversationRecord, replyTo: string | undefined): void {
  if (replyTo && !conversation.messages.some((message) => message.id === replyTo)) {
    throw invalid(`replyToMessageId: ${replyTo} is not a message of conversation ${conversation.id}`);
  }
}

/** `POST /v1/conversations/{id}/messages`, both forms (`?stream=true` answers a stream). */
export const sendMessage = endpoint('messages.send', {
  acceptsNdjson: true,
  handle: (ctx) => {
    const streaming = ctx.url.searchParams.get('stream') === 'true';
    if (!streaming && ctx.body.stream) throw invalid('stream: is only accepted with ?stream=true');
    const agent = agentOf(ctx);
    const conversation = conversationFor(ctx.world.state, agent.id, ctx.params.conversation_id ?? '');
    requireActive(agent);
    checkReplyTo(conversation, ctx.body.replyToMessageId);
    const blocks = toBlocks(ctx.world.state, agent, ctx.body.content);
    if (streaming) return startStreamingSend(ctx, conversation, blocks);
    const message = createMessage(ctx.world, conversation, {
      sender_id: agent.id,
      blocks,
      fallback_text: ctx.body.fallbackText ?? null,
      status: 'sent',
      reply_to: ctx.body.replyToMessageId,
      metadata: ctx.body.metadata,
    });
    return json(201, {
      message: {
        id: message.id,
        conversationId: conversation.id,
        status: message.status,
        content: blocks.map(sendBlock),
      },
    });
  },
});

/** `GET /v1/conversations/{id}/messages`: newest first, `limit` 1 to 100 (never clamped). */
export const listMessages = endpoint('conversations.listMessages', {
  handle: (ctx) => {
    const query = checkJson(ListMessagesQuery, numericQuery(ctx.url.searchParams), 'query');
    const agent = agentOf(ctx);
    const conversation = conversationFor(ctx.world.state, agent.id, ctx.params.conversation_id ?? '');
    const page = newestFirst(conversation, query.limit ?? 50, query.before_sequence);
    return json(200, { messages: page.map(messageView) });
  },
});

/** Query values that look like integers become numbers, so the schema can check their range. */
function numericQuery(params: URLSearchParams): Record<string, unknown> {
  return Object.fromEntries(
    [...params].map(([name, value]) => [name, /^-?\d+$/.test(value) ? Number(value) : value]),
  );
}

/** `DELETE /v1/messages/{id}`: by its sender only, within 120 s; a repeat answers the tombstone. */
export const unsendMessage = endpoint('messages.unsend', {
  handle: (ctx) => {
    const { world } = ctx;
    const caller = ctx.caller;
    if (!caller) throw new Error('unsend needs a caller');
    const { message } = messageFor(world.state, caller, ctx.params.message_id ?? '');
    if (caller.kind === 'agent') requireActive(caller.agent);
    if (message.sender_id !== caller.id) throw forbidden('only the sender of a message may unsend it');
    if (message.status !== 'deleted') {
      if (world.clock.nowMs() - message.created_at.getTime() > UNSEND_WINDOW_MS) {
        throw new MockError(
          409,
          'unsend_window_elapsed',
          'a message can be unsent only within 120 s of its creation',
        );
      }
      message.status = 'deleted';
      message.blocks = [];
      message.fallback_text = null;
      message.reactions = [];
      world.clock.cancel(message.auto_complete_task);
      message.auto_complete_task = undefined;
      world.streams.closeAll(message.id);
      // No webhook event and no push notification: an unsend is silent (SPEC.md); the live feed
      // of the mock is a local view of state, not a notification.
      messageUpdated(world, message);
    }
    return json(200, { message: tombstoneView(message) });
  },
});
