// The live `text/event-stream` answers of streaming messages (PROTOCOL.md section 8). Each open
// stream is a subscriber of its message with its own seq; events go out as soon as a change applies.
import { EVENT_SCHEMA } from '../schemas/common.js';
import { newId } from './ids.js';
import { sendBlock } from './message-view.js';
import { SseWriter } from './sse-writer.js';
import type { MessageRecord } from './state.js';

/** How one stream ends early: cut after N events (a fault) and what to stop when it does. */
export interface StreamOptions {
  cutAfterEvents?: number;
  keepAliveMs: number;
  /** The request's signal: when the client aborts, the stream stops following (nothing else changes). */
  signal?: AbortSignal | undefined;
  /** Called once when the stream stops following the message for any reason but completion. */
  onStop?: () => void;
}

interface Subscriber {
  patch(blockId: string, value: string): void;
  complete(): void;
  close(): void;
}

/** Every open stream, by message id. */
export class StreamHub {
  readonly #subscribers = new Map<string, Set<Subscriber>>();

  /** How many streams follow a message now; a stream leaves when it completes, is cut, or its client goes away. */
  get openCount(): number {
    let count = 0;
    for (const set of this.#subscribers.values()) count += set.size;
    return count;
  }

  /**
   * Opens a stream that starts with `message.started` (text so far) and then follows live.
   * `cut()` breaks it as a fault would (the connection is destroyed).
   */
  open(
    message: MessageRecord,
    options: StreamOptions,
  ): { body: ReadableStream<Uint8Array>; cut: () => void } {
    let seq = 0;
    // Assigned first thing in the writer's start, which runs inside its constructor.
    let writer!: SseWriter;
    const subscribers = () => this.#subscribers.get(message.id);
    const leave = () => subscribers()?.delete(subscriber);
    const write = (type: string, fields: Record<string, unknown>) => {
      if (writer.done) return;
      seq += 1;
      writer.event(type, {
        schema: EVENT_SCHEMA,
        eventId: newId('evt'),
        conversationId: message.conversation_id,
        type,
        seq,
        ...fields,
      });
      // "Destroyed right after that many events": cut at once, not at the next event.
      if (options.cutAfterEvents !== undefined && seq >= options.cutAfterEvents) writer.cut();
    };
    const subscriber: Subscriber = {
      patch: (blockId, value) =>
        write('message.patch', {
          messageId: message.id,
          patch: { op: 'appendText', blockId, path: '/text', value },
        }),
      complete: () => {
        // `revision` is an extension field (the SDK must not require it): a reader of a replayed
        // stream, which starts from the text so far, learns the final revision without counting.
        write('message.completed', { messageId: message.id, revision: message.revision });
        leave();
        writer.close();
      },
      close: () => {
        leave();
        writer.close();
      },
    };
    new SseWriter(
      {
        keepAliveMs: options.keepAliveMs,
        signal: options.signal,
        onStop: () => {
          leave();
          options.onStop?.();
        },
      },
      (started) => {
        writer = started;
        if (options.cutAfterEvents === 0) return writer.cut();
        const set = subscribers() ?? new Set<Subscriber>();
        this.#subscribers.set(message.id, set);
        set.add(subscriber);
        write('message.started', { message: { id: message.id, content: message.blocks.map(sendBlock) } });
        if (message.status !== 'streaming') subscriber.complete();
      },
    );
    return { body: writer.body, cut: () => writer.cut() };
  }

  /** Tells every open stream of the message about an applied append. */
  patched(messageId: string, blockId: string, value: string): void {
    for (const subscriber of [...(this.#subscribers.get(messageId) ?? [])]) subscriber.patch(blockId, value);
  }

  /** Tells every open stream of the message that it completed; the streams end. */
  completed(messageId: string): void {
    for (const subscriber of [...(this.#subscribers.get(messageId) ?? [])]) subscriber.complete();
    this.#subscribers.delete(messageId);
  }

  /** Ends every open stream (reset, unsend of a streaming message). */
  closeAll(messageId?: string): void {
    const sets = messageId ? [this.#subscribers.get(messageId)] : [...this.#subscribers.values()];
    for (const set of sets) for (const subscriber of [...(set ?? [])]) subscriber.close();
    if (messageId) this.#subscribers.delete(messageId);
    else this.#subscribers.clear();
  }
}
