// Where a reply's text goes once the message exists: patch lines of the open Streamable HTTP
// request, or the append and complete endpoints.

import type * as z from 'zod/mini';
import { ConnectionError } from '../core/errors.js';
import type { RequestOptions } from '../core/options.js';
import type { Transport } from '../core/transport.js';
import { AppendResponse, CompleteResponse, type MessageStatus } from '../schemas/messages.js';
import type { StreamEvent } from '../schemas/stream.js';
import type { NdjsonBody } from './ndjson-body.js';

/** What a completion answers. @internal */
export interface Completion {
  status: z.output<typeof MessageStatus>;
  revision: number;
}

/** One way of feeding the message. A failure may leave a send half-applied: the writer reads back. @internal */
export interface ReplySink {
  readonly kind: 'stream' | 'append';
  append(text: string): Promise<void>;
  complete(fallbackText: string): Promise<Completion>;
  /** Drops the connection, if any; the message itself is left as it is. */
  close(reason?: unknown): void;
}

/** The ids a sink writes to. @internal */
export interface SinkTarget {
  messageId: string;
  blockId: string;
}

/**
 * Patch lines on the open NDJSON request. The answer is read all along: each echoed patch
 * acknowledges text, and `append` waits while more than `window` characters are unacknowledged,
 * so a stalled service slows the writer down instead of filling the pipe.
 * @internal
 */
export class StreamSink implements ReplySink {
  readonly kind = 'stream';
  readonly #target: SinkTarget;
  readonly #body: NdjsonBody;
  readonly #events: AsyncIterator<StreamEvent>;
  readonly #window: number;
  readonly #reading: Promise<void>;
  #sent = 0;
  #acknowledged = 0;
  #patches = 0;
  #completed = false;
  #broken: unknown;
  #wake: (() => void)[] = [];

  constructor(target: SinkTarget, body: NdjsonBody, events: AsyncIterator<StreamEvent>, window: number) {
    this.#target = target;
    this.#body = body;
    this.#events = events;
    this.#window = window;
    this.#reading = this.#read();
  }

  async #read(): Promise<void> {
    try {
      for (;;) {
        const next = await this.#events.next();
        if (next.done) break;
        const event = next.value;
        if (event.type === 'message.patch') {
          // Every applied append raises the revision, whichever block or input it came from.
          this.#patches += 1;
          if (event.patch.blockId === this.#target.blockId) this.#acknowledged += event.patch.value.length;
        } else if (event.type === 'message.completed') {
          this.#completed = true;
        }
        this.#notify();
      }
    } catch (error) {
      this.#broken = error;
    } finally {
      this.#body.abort(this.#broken);
      this.#notify();
    }
  }

  #notify(): void {
    for (const wake of this.#wake.splice(0)) wake();
  }

  async #until(condition: () => boolean): Promise<void> {
    while (!condition() && this.#broken === undefined && !this.#completed) {
      await new Promise<void>((resolve) => this.#wake.push(resolve));
    }
    if (this.#broken !== undefined) throw this.#broken;
  }

  async append(text: string): Promise<void> {
    if (this.#broken !== undefined) throw this.#broken;
    const line = {
      type: 'message.patch',
      patch: { op: 'appendText', blockId: this.#target.blockId, path: '/text', value: text },
    };
    if (!this.#body.line(line))
      throw new ConnectionError('The streamed request closed before the reply was complete.');
    this.#sent += text.length;
    await this.#until(() => this.#sent - this.#acknowledged < this.#window);
  }

  async complete(fallbackText: string): Promise<Completion> {
    if (this.#broken !== undefined) throw this.#broken;
    if (!this.#body.line({ type: 'message.completed', fallbackText })) {
      throw new ConnectionError('The streamed request closed before the reply was complete.');
    }
    this.#body.end();
    await this.#reading;
    if (!this.#completed) {
      throw this.#broken ?? new ConnectionError('The event stream ended before message.completed.');
    }
    return { status: 'sent', revision: this.#patches };
  }

  close(reason?: unknown): void {
    this.#body.abort(reason);
    this.#events.return?.().catch(() => {});
  }
}

/** The append and complete endpoints, one request per change. Never retried blindly: appends are not idempotent. @internal */
export class AppendSink implements ReplySink {
  readonly kind = 'append';
  readonly #transport: Transport;
  readonly #target: SinkTarget;
  readonly #request: RequestOptions;
  readonly #operation: string;

  constructor(transport: Transport, target: SinkTarget, request: RequestOptions, operation: string) {
    this.#transport = transport;
    this.#target = target;
    const { signal, timeoutMs, headers } = request;
    this.#request = { signal, timeoutMs, headers, maxRetries: 0 };
    this.#operation = operation;
  }

  async append(text: string): Promise<void> {
    const { messageId, blockId } = this.#target;
    await this.#transport.request({
      method: 'POST',
      path: `/v1/messages/${encodeURIComponent(messageId)}/blocks/${encodeURIComponent(blockId)}/append`,
      body: { path: '/text', value: text },
      schema: AppendResponse,
      operation: this.#operation,
      options: this.#request,
    });
  }

  async complete(fallbackText: string): Promise<Completion> {
    const answer = await this.#transport.request({
      method: 'POST',
      path: `/v1/messages/${encodeURIComponent(this.#target.messageId)}/complete`,
      body: { status: 'sent', fallbackText },
      schema: CompleteResponse,
      operation: this.#operation,
      options: this.#request,
    });
    return { status: answer.status, revision: answer.revision };
  }

  close(): void {}
}
