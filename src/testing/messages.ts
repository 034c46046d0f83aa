// Messages (PROTOCOL.md sections 7 and 8): how one is created and changed (sequence numbers,
// appends that raise the revision, completion by call, by stream line or automatically 10 minutes
// after the last change), how a stored message looks on the wire (camelCase blocks in the send
// answer and stream events, the snake_case Message of SPEC.md in history, conversations and
// message.received), and the endpoints: the non-streaming send, history paging, unsend, append
// and complete.

import { ListMessagesQuery } from '../schemas/conversations.js';
import {
  MAX_MESSAGE_TEXT,
  type Message,
  type MessagePart,
  type SendMessageRequest,
} from '../schemas/messages.js';
import { type AgentCaller, agentMessage, conversationFor, messageFor, requireActive } from './access.js';
import { checkJson } from './body.js';
import { forbidden, invalid, json, MockError } from './http.js';
import { newId } from './ids.js';
import { messageChanged } from './live-feed.js';
import { endpoint, type RouteContext } from './router.js';
import type {
  AgentRecord,
  BlockRecord,
  ConversationRecord,
  MessageRecord,
  MockState,
  MockWorld,
} from './state.js';
import { followMessage } from './streaming.js';

/** A streaming message completes by itself this long after its last change (PROTOCOL.md section 8). */
const AUTO_COMPLETE_MS = 10 * 60 * 1000;

/** What a new message holds: the rest starts empty. */
type NewMessage = Pick<MessageRecord, 'sender_id' | 'blocks' | 'status'> &
  Partial<Pick<MessageRecord, 'fallback_text' | 'reply_to' | 'invoked_agents'>> & {
    metadata?: Record<string, unknown> | undefined;
  };

/** Adds a message at the next sequence of the conversation. */
export function createMessage(
  world: MockWorld,
  conversation: ConversationRecord,
  input: NewMessage,
): MessageRecord {
  const now = world.clock.now();
  const last = conversation.messages.at(-1);
  const message: MessageRecord = {
    id: newId('msg'),
    conversation_id: conversation.id,
    sequence: (last?.sequence ?? 0) + 1,
    sender_id: input.sender_id,
    blocks: input.blocks,
    fallback_text: input.fallback_text ?? null,
    status: input.status,
    created_at: now,
    reply_to: input.reply_to ?? null,
    metadata: input.metadata ?? null,
    delivered_at: null,
    read_at: null,
    reactions: [],
    revision: 0,
    last_change: now,
  };
  // Set after the literal (a spread inside it makes every later field a slow keyed define).
  if (input.invoked_agents?.length) message.invoked_agents = input.invoked_agents;
  conversation.messages.push(message);
  world.state.messages.set(message.id, message);
  if (message.status === 'streaming') scheduleAutoComplete(world, message);
  messageChanged(world, message, 'created');
  return message;
}

/** Appends text to a text block of a streaming message; every open stream sees the patch. */
export function appendText(world: MockWorld, message: MessageRecord, blockId: string, value: string): number {
  const block = message.blocks.find((candidate) => candidate.id === blockId);
  if (!block) throw new MockError(404, 'not_found', `block ${blockId} not found in message ${message.id}`);
  if (block.type !== 'text') throw invalid(`blockId: block ${blockId} is not a text block`);
  requireStreaming(message);
  const total = message.blocks.reduce((sum, b) => sum + (b.type === 'text' ? b.text.length : 0), 0);
  if (total + value.length > MAX_MESSAGE_TEXT) {
    throw invalid(`value: the message would exceed ${MAX_MESSAGE_TEXT} characters of text`);
  }
  block.text += value;
  message.revision += 1;
  message.last_change = world.clock.now();
  scheduleAutoComplete(world, message);
  world.streams.patched(message, blockId, value);
  messageChanged(world, message, 'updated');
  return message.revision;
}

/** Completes a streaming message as `sent`; every open stream gets message.completed and ends. */
export function completeMessage(world: MockWorld, message: MessageRecord, fallbackText?: string): number {
  requireStreaming(message);
  message.status = 'sent';
  if (fallbackText !== undefined) message.fallback_text = fallbackText;
  message.last_change = world.clock.now();
  world.streams.completed(message);
  messageChanged(world, message, 'updated');
  return message.revision;
}

function requireStreaming(message: MessageRecord): void {
  if (message.status !== 'streaming') {
    throw new MockError(
      409,
      'message_not_streaming',
      `message ${message.id} is ${message.status}, not streaming`,
    );
  }
}

function scheduleAutoComplete(world: MockWorld, message: MessageRecord): void {
  world.clock.cancel(message.auto_complete_task);
  message.auto_complete_task = world.clock.schedule(message.last_change.getTime() + AUTO_COMPLETE_MS, () => {
    message.auto_complete_task = undefined;
    // A task left from before a completion or an unsend finds the message no longer streaming.
    if (message.status === 'streaming') completeMessage(world, message);
  });
}

/** A block as a history part (PROTOCOL.md section 7). */
function part(block: BlockRecord, index: number): MessagePart {
  switch (block.type) {
    case 'text':
      return { part_index: index, type: 'text', text: block.text };
    case 'actions':
      return { part_index: index, type: 'actions', actions: block.actions };
    default:
      return { part_index: index, type: block.type, attachment_id: block.attachmentId };
  }
}

/** The text of a message's text blocks, joined, as its fallback when none was given. */
function joinedText(blocks: readonly BlockRecord[]): string {
  return blocks.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
}

/** The snake_case Message of SPEC.md. */
export function messageView(message: MessageRecord): Message {
  const deleted = message.status === 'deleted';
  return {
    id: message.id,
    conversation_id: message.conversation_id,
    sequence: message.sequence,
    sender: { id: message.sender_id },
    parts: deleted ? [] : message.blocks.map(part),
    fallback_text: deleted ? null : (message.fallback_text ?? joinedText(message.blocks)),
    status: message.status,
    created_at: message.created_at.toISOString(),
    reply_to: message.reply_to,
    invoked_agents: [...(message.invoked_agents ?? [])],
    suggestions: [],
    reactions: deleted ? [] : message.reactions.map((reaction) => ({ ...reaction })),
    delivered_at: message.delivered_at ? message.delivered_at.toISOString() : null,
    read_at: message.read_at ? message.read_at.toISOString() : null,
    edited_at: null,
    revisions: [],
    revision: message.revision,
  };
}

/** The newest messages first, below `beforeSequence` when given. */
export function newestFirst(conversation: ConversationRecord, limit: number, beforeSequence = Infinity) {
  return conversation.messages
    .filter((m) => m.sequence < beforeSequence)
    .slice(-limit)
    .reverse();
}

/** The unsend window: 120 s after `created_at`. */
const UNSEND_WINDOW_MS = 120_000;

type SendBody = ReturnType<typeof SendMessageRequest.parse>;

/** Stored blocks for a send: ids checked or assigned, attachments checked as uploaded. */
function toBlocks(state: MockState, agent: AgentRecord, content: SendBody['content']): BlockRecord[] {
  const seen = new Set<string>();
  return content.map((block, index) => {
    const id = block.id ?? newId('blk');
    if (seen.has(id)) throw invalid(`content[${index}].id: repeats block id ${id}`);
    seen.add(id);
    if (block.type === 'file' || block.type === 'image') {
      const attachment = state.attachments.get(block.attachmentId);
      if (!attachment || attachment.agent_id !== agent.id || !attachment.bytes) {
        throw invalid(`content[${index}].attachmentId: ${block.attachmentId} has no completed upload`);
      }
    }
    return { ...block, id };
  });
}

/** `POST /v1/conversations/{id}/messages`, both forms (`?stream=true` answers a stream). */
export const sendMessage = endpoint('messages.send', {
  acceptsNdjson: true,
  handle: (ctx) => {
    const streaming = ctx.request.url.searchParams.get('stream') === 'true';
    if (!streaming && ctx.body.stream) throw invalid('stream: is only accepted with ?stream=true');
    const { agent } = ctx.caller;
    const conversation = conversationFor(ctx.world.state, agent.id, ctx.params.conversation_id ?? '');
    requireActive(agent);
    const { fallbackText, replyToMessageId, metadata } = ctx.body;
    // The reply target must be a message of the same conversation.
    if (replyToMessageId && !conversation.messages.some((message) => message.id === replyToMessageId)) {
      throw invalid(
        `replyToMessageId: ${replyToMessageId} is not a message of conversation ${conversation.id}`,
      );
    }
    const blocks = toBlocks(ctx.world.state, agent, ctx.body.content);
    // A streamed reply always has a text block to append to.
    if (streaming && !blocks.some((block) => block.type === 'text')) {
      blocks.push({ id: newId('blk'), type: 'text', text: '' });
    }
    const message = createMessage(ctx.world, conversation, {
      sender_id: agent.id,
      blocks,
      // An empty fallback of a streamed reply is none: the text streamed is its fallback.
      fallback_text: (streaming ? fallbackText || null : fallbackText) ?? null,
      status: streaming ? 'streaming' : 'sent',
      reply_to: replyToMessageId ? { message_id: replyToMessageId, part_index: 0 } : null,
      metadata,
    });
    if (streaming) {
      // A replay follows the same message.
      ctx.replayWith = (replay) => followMessage(replay, message);
      return followMessage(ctx, message);
    }
    // Stored blocks are the send shape with their ids, as the answer writes them.
    return json(201, {
      message: { id: message.id, conversationId: conversation.id, status: message.status, content: blocks },
    });
  },
});

/** `GET /v1/conversations/{id}/messages`: newest first, `limit` 1 to 100 (never clamped). */
export const listMessages = endpoint('conversations.listMessages', {
  handle: (ctx) => {
    const query = checkJson(ListMessagesQuery, numericQuery(ctx.request.url.searchParams), 'query');
    const { agent } = ctx.caller;
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
    const { caller } = ctx;
    const message = messageFor(world.state, caller, ctx.params.message_id ?? '');
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
      world.streams.closeAll(message.id);
      // No webhook event and no push notification: an unsend is silent (SPEC.md); the live feed
      // of the mock is a local view of state, not a notification.
      messageChanged(world, message, 'updated');
    }
    // The tombstone: only what survives deletion.
    const { id, conversation_id, sequence, sender, status, created_at } = messageView(message);
    return json(200, { message: { id, conversation_id, sequence, sender, status, created_at } });
  },
});

/** The agent's own message, for a change: 404 outside membership, 403 when inactive or another sender's. */
function ownMessage(ctx: RouteContext<unknown, AgentCaller>): MessageRecord {
  const message = agentMessage(ctx);
  if (message.sender_id !== ctx.caller.id) throw forbidden('only the sender of a message may change it');
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
