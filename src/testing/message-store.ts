// Creating and changing messages: sequence numbers, appends that raise the revision, completion
// (by call, by stream line, or automatically 10 minutes after the last change).
import { MAX_MESSAGE_TEXT } from '../schemas/messages.js';
import { invalid, MockError } from './http.js';
import { newId } from './ids.js';
import { messageCreated, messageUpdated } from './live-events.js';
import type { BlockRecord, ConversationRecord, MessageRecord } from './state.js';
import type { MockWorld } from './world.js';

/** A streaming message completes by itself this long after its last change (PROTOCOL.md section 8). */
export const AUTO_COMPLETE_MS = 10 * 60 * 1000;

/** What a new message holds. */
export interface NewMessage {
  sender_id: string;
  blocks: BlockRecord[];
  fallback_text?: string | null;
  status: 'sent' | 'streaming';
  reply_to?: string;
  /** The part of `reply_to` replied to; 0 by default (a click names its actions block). */
  reply_part_index?: number;
  /** The agents a user message names (PROTOCOL.md section 14). */
  invoked_agents?: string[];
  metadata?: Record<string, unknown>;
}

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
    reply_to: input.reply_to ? { message_id: input.reply_to, part_index: input.reply_part_index ?? 0 } : null,
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
  messageCreated(world, message);
  return message;
}

/** Appends text to a text block of a streaming message; every open stream sees the patch. */
export function appendText(world: MockWorld, message: MessageRecord, blockId: string, value: string): number {
  const block = message.blocks.find((candidate) => candidate.id === blockId);
  if (!block) throw new MockError(404, 'not_found', `block ${blockId} not found in message ${message.id}`);
  if (block.type !== 'text') throw invalid(`blockId: block ${blockId} is not a text block`);
  requireStreaming(message);
  const total = message.blocks.reduce((sum, b) => sum + (b.text?.length ?? 0), 0);
  if (total + value.length > MAX_MESSAGE_TEXT) {
    throw invalid(`value: the message would exceed ${MAX_MESSAGE_TEXT} characters of text`);
  }
  block.text = (block.text ?? '') + value;
  message.revision += 1;
  message.last_change = world.clock.now();
  scheduleAutoComplete(world, message);
  world.streams.patched(message.id, blockId, value);
  messageUpdated(world, message);
  return message.revision;
}

/** Completes a streaming message as `sent`; every open stream gets message.completed and ends. */
export function completeMessage(world: MockWorld, message: MessageRecord, fallbackText?: string): number {
  requireStreaming(message);
  message.status = 'sent';
  if (fallbackText !== undefined) message.fallback_text = fallbackText;
  message.last_change = world.clock.now();
  world.clock.cancel(message.auto_complete_task);
  message.auto_complete_task = undefined;
  world.streams.completed(message.id);
  messageUpdated(world, message);
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
    if (message.status === 'streaming') completeMessage(world, message);
  });
}
