// The live `text/event-stream` answers of streaming messages (PROTOCOL.md section 8). Each open
// stream is a subscriber of its message with its own seq; events go out as soon as a change applies.
import { EVENT_SCHEMA } from '../schemas/common.js';
import { newId } from './ids.js';
import { sendBlock } from './message-view.js';
import type { MessageRecord } from './state.js';

const encoder = new TextEncoder();

/** How one stream ends early: cut after N events (a fault) and what to stop when it does. */
export interface StreamOptions {
  cutAfterEvents?: number;
  keepAliveMs: number;
  /** The request's signal: when the client aborts, the stream stops following (nothing else changes). */
  signal?: AbortSignal;
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
    let events = 0;
    let done = false;
    let keepAlive: ReturnType<typeof setTimeout> | undefined;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const subscribers = () => this.#subscribers.get(message.id);

    let cutPending = false;
    const cutNow = () => controller.error(new Error('stream cut'));
    const finish = (how: 'close' | 'error' | 'cancel') => {
      if (done) return;
      done = true;
      clearTimeout(keepAlive);
      subscribers()?.delete(subscriber);
      if (how === 'close') controller.close();
      // error() drops queued chunks, so events already written wait until the reader has them.
      if (how === 'error') {
        if ((controller.desiredSize ?? 0) > 0) cutNow();
        else cutPending = true;
      }
      if (how !== 'close') options.onStop?.();
    };
    const armKeepAlive = () => {
      clearTimeout(keepAlive);
      keepAlive = setTimeout(() => {
        if (done) return;
        controller.enqueue(encoder.encode(': keep-alive\n\n'));
        armKeepAlive();
      }, options.keepAliveMs);
      keepAlive.unref?.();
    };
    const write = (type: string, fields: Record<string, unknown>) => {
      if (done) return;
      seq += 1;
      events += 1;
      const data = {
        schema: EVENT_SCHEMA,
        eventId: newId('evt'),
        conversationId: message.conversation_id,
        type,
        seq,
        ...fields,
      };
      controller.enqueue(encoder.encode(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`));
      armKeepAlive();
      // "Destroyed right after that many events": cut at once, not at the next event.
      if (options.cutAfterEvents !== undefined && events >= options.cutAfterEvents) finish('error');
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
        finish('close');
      },
      close: () => finish('close'),
    };

    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
        if (options.cutAfterEvents === 0) return finish('error');
        const set = subscribers() ?? new Set<Subscriber>();
        this.#subscribers.set(message.id, set);
        set.add(subscriber);
        write('message.started', { message: { id: message.id, content: message.blocks.map(sendBlock) } });
        if (message.status !== 'streaming') subscriber.complete();
      },
      pull: () => {
        if (cutPending) cutNow();
      },
      // The client went away: the message is untouched, only this stream stops.
      cancel: () => finish('cancel'),
    });
    options.signal?.addEventListener(
      'abort',
      () => {
        if (done) return;
        finish('cancel');
        controller.error(options.signal?.reason);
      },
      { once: true },
    );
    return { body, cut: () => finish('error') };
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
