import type { ResponseBlock } from '../schemas/messages.js';
import type { StreamEvent } from '../schemas/stream.js';

/** A block of a streamed message, with the text applied to it so far. */
export type StreamedBlock = ResponseBlock;

/** A streamed message as built from its events: what the service has applied. */
export interface StreamedMessage {
  /** The message id (`msg_...`), from `message.started`. */
  id: string;
  /** The conversation the message is in. */
  conversationId: string;
  /** Every block in order, text blocks carrying the text applied so far. */
  blocks: StreamedBlock[];
  /** True once `message.completed` arrived. */
  completed: boolean;
  /** The `seq` of the last event applied. */
  lastSeq: number;
}

/** Joins the text of a message's text blocks with newlines, as the service does for its fallback text. */
export function textOfBlocks(blocks: readonly StreamedBlock[]): string {
  return blocks
    .filter((block) => block.type === 'text')
    .map((block) => block.text ?? '')
    .join('\n');
}

/** Applies stream events, in order, to the message they describe. */
export class StreamedMessageBuilder {
  #message: StreamedMessage | undefined;

  /** The message so far, or undefined before `message.started`. */
  get current(): StreamedMessage | undefined {
    return this.#message;
  }

  /** Applies one event; events of unknown types and patches of unknown ops change nothing. */
  apply(event: StreamEvent): void {
    switch (event.type) {
      case 'message.started':
        this.#message = {
          id: event.message.id,
          conversationId: event.conversationId,
          blocks: event.message.content.map((block) => ({ ...block })),
          completed: false,
          lastSeq: event.seq,
        };
        return;
      case 'message.patch': {
        const message = this.#message;
        if (message === undefined) return;
        message.lastSeq = event.seq;
        const block = message.blocks.find((candidate) => candidate.id === event.patch.blockId);
        if (block !== undefined && event.patch.op === 'appendText' && event.patch.path === '/text') {
          block.text = (block.text ?? '') + event.patch.value;
        }
        return;
      }
      case 'message.completed':
        if (this.#message !== undefined) {
          this.#message.completed = true;
          this.#message.lastSeq = event.seq;
        }
        return;
      default:
        if (this.#message !== undefined) this.#message.lastSeq = (event as { seq: number }).seq;
    }
  }

  /** A copy of the message so far that later events do not change. */
  snapshot(): StreamedMessage | undefined {
    const message = this.#message;
    return message && { ...message, blocks: message.blocks.map((block) => ({ ...block })) };
  }
}
