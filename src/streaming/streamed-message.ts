import { InvalidResponseError } from '../core/errors.js';
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

// How many applied events are remembered to recognise an exact repeat of one.
const REMEMBERED = 64;
// Patches shorter than SMALL characters (token-sized) are gathered, PENDING at a time, and joined
// into their block.
const SMALL = 64;
const PENDING = 256;

/**
 * Applies stream events to the message they describe, trusting none of them. Invariant: the
 * events applied are `message.started` with seq 1... then one event per seq, each following the
 * last, all of that one message, nothing after `message.completed`. An exact repeat of an applied
 * event (same seq, same eventId) is dropped; anything else that breaks the invariant is an
 * InvalidResponseError naming the event, and nothing of it is applied.
 */
export class StreamedMessageBuilder {
  #message: StreamedMessage | undefined;
  // The eventIds of the last REMEMBERED applied events, in a ring: applied seqs run one by one
  // up to `lastSeq`, so the eventId of seq `lastSeq - back` sits `back` slots behind `#head`.
  // (A Map set and delete per event cost about as much as all the other checks.)
  readonly #eventIds: string[] = new Array<string>(REMEMBERED).fill('');
  /** The slot of `lastSeq`'s eventId. */
  #head = 0;
  /** How many slots hold an applied event's eventId (at most REMEMBERED). */
  #remembered = 0;
  /** The block the last patch went to: a stream appends to one block for long runs. */
  #lastBlock: StreamedBlock | undefined;
  // Short text appended to `#lastBlock` and not yet in its `text`. A concatenation per token-sized
  // patch keeps a rope node and a tiny string per patch alive, which the garbage collector then
  // copies; joined PENDING at a time, the pieces die young and the text grows by one flat string.
  // (Long patches are concatenated as they come: joining them would copy more than it saves.)
  readonly #pending: string[] = [];

  /**
   * Applies one event; false when it was an exact repeat of an applied one (dropped). Events of
   * unknown types and patches of unknown ops change nothing but their seq.
   */
  apply(event: StreamEvent): boolean {
    const message = this.#message;
    if (message !== undefined && event.seq <= message.lastSeq) {
      if (this.#isApplied(event.seq, message.lastSeq, event.eventId)) return false;
      throw untrusted(
        event,
        `repeats or reorders seq ${event.seq} (the last applied was ${message.lastSeq})`,
      );
    }
    if (event.type === 'message.started') {
      if (message !== undefined)
        throw untrusted(event, `is a second message.started (of ${event.message.id})`);
      this.#message = {
        id: event.message.id,
        conversationId: event.conversationId,
        blocks: event.message.content.map((block) => ({ ...block })),
        completed: false,
        lastSeq: event.seq,
      };
      this.#remember(event);
      return true;
    }
    if (message === undefined) throw untrusted(event, 'came before message.started');
    if (event.seq !== message.lastSeq + 1) {
      throw untrusted(event, `skips from seq ${message.lastSeq} to ${event.seq}`);
    }
    if (message.completed) throw untrusted(event, 'came after message.completed');
    const messageId = (event as { messageId?: unknown }).messageId;
    if (messageId !== undefined && messageId !== message.id) {
      throw untrusted(event, `is of message ${String(messageId)}, not ${message.id}`);
    }
    if (event.type === 'message.patch') {
      const patch = event.patch;
      const block = this.#blockOf(message, patch.blockId);
      if (block !== undefined && patch.op === 'appendText' && patch.path === '/text') {
        const value = patch.value;
        if (value.length >= SMALL) {
          this.#flush();
          block.text = (block.text ?? '') + value;
        } else if (this.#pending.push(value) === PENDING) {
          this.#flush();
        }
      }
    } else if (event.type === 'message.completed') {
      message.completed = true;
    }
    message.lastSeq = event.seq;
    this.#remember(event);
    return true;
  }

  /** A copy of the message so far that later events do not change. */
  snapshot(): StreamedMessage | undefined {
    this.#flush();
    const message = this.#message;
    return message && { ...message, blocks: message.blocks.map((block) => ({ ...block })) };
  }

  /** Called after `lastSeq` became `event.seq`: its slot follows the previous one. */
  #remember(event: StreamEvent): void {
    this.#head = (this.#head + 1) % REMEMBERED;
    this.#eventIds[this.#head] = event.eventId;
    if (this.#remembered < REMEMBERED) this.#remembered += 1;
  }

  /** True when `eventId` is the applied event of `seq` (at most `lastSeq`), if still remembered. */
  #isApplied(seq: number, lastSeq: number, eventId: string): boolean {
    // Both are safe integers, so a difference under REMEMBERED is exact.
    const back = lastSeq - seq;
    if (back >= this.#remembered) return false;
    return this.#eventIds[(this.#head - back + REMEMBERED) % REMEMBERED] === eventId;
  }

  /** Moves the pending text into its block. */
  #flush(): void {
    const block = this.#lastBlock;
    if (block === undefined || this.#pending.length === 0) return;
    block.text = (block.text ?? '') + this.#pending.join('');
    this.#pending.length = 0;
  }

  /** The block with `blockId`, looked up from the one the last patch went to. */
  #blockOf(message: StreamedMessage, blockId: string): StreamedBlock | undefined {
    const last = this.#lastBlock;
    if (last !== undefined && last.id === blockId) return last;
    this.#flush();
    for (const block of message.blocks) {
      if (block.id === blockId) {
        this.#lastBlock = block;
        return block;
      }
    }
    return undefined;
  }
}

function untrusted(event: StreamEvent, what: string): InvalidResponseError {
  return new InvalidResponseError(
    `The event stream's ${event.type} event (seq ${event.seq}) ${what}; it was not applied.`,
  );
}
