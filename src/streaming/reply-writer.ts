// ReplyWriter, the reply `messages.startReply()` hands back: the class users see and check with
// instanceof. Every call goes to the writer behind it (reply-writer-core.ts), made on the streaming
// side, so this module, which the main entry exports, holds none of the machinery: a bundler that
// splits by module (esbuild) would otherwise bring it up front with `import { AgentClient }`.
import type { ReplyResult, ReplyTransport } from './options.js';
import type { ReplyWriterCore } from './reply-writer-core.js';

/**
 * A reply being written into a streaming message. Writes are buffered and sent in batches (the
 * first write at once, then 256 characters or 100 ms); `write()` waits when too much is buffered.
 * `complete()` sends the rest and completes the message; `interrupt()` ends it cut short, marked.
 * A connection that breaks or stalls is recovered: the message is read back and exactly the text the
 * service did not apply is sent through the append endpoint; the completed message is then read back
 * once more and checked, so the result is never a success the service does not hold. A start that
 * replayed a message already completed under the same key gives a finished writer: writes are
 * dropped and `complete()` answers that message with outcome `replayed`.
 *
 * @example
 * const reply = await client.messages.startReply(cnv, { replyToMessageId });
 * for await (const token of llm) await reply.write(token);
 * const { message_id, revision, text, outcome } = await reply.complete();
 */
export class ReplyWriter {
  /** The id of the message being written. */
  readonly messageId: string;
  /** The id of the text block the reply appends to. */
  readonly blockId: string;
  /** True when the start replayed a reply an earlier writer of the key finished: writes are dropped. */
  readonly replayed: boolean;
  readonly #core: ReplyWriterCore;

  /** Made by `startReply()`. @internal */
  constructor(core: ReplyWriterCore) {
    this.#core = core;
    this.messageId = core.messageId;
    this.blockId = core.blockId;
    this.replayed = core.replayed;
  }

  /** How text reaches the service now: `stream` until a fallback or a recovery switches to `append`. */
  get transport(): Exclude<ReplyTransport, 'auto'> {
    return this.#core.transport;
  }

  /** The text written so far, including what is still buffered; a finished writer's is the stored text. */
  get text(): string {
    return this.#core.text;
  }

  /** Adds text to the reply; resolves once it is buffered and the buffer is below its bound. */
  write(text: string): Promise<void> {
    return this.#core.write(text);
  }

  /** Sends what is buffered and completes the message; a second call answers the same result. */
  complete(options?: { fallbackText?: string }): Promise<ReplyResult> {
    return this.#core.complete(options);
  }

  /**
   * Ends the reply cut short (its source failed, or the handler was interrupted): sends what is
   * buffered, appends the interrupted note (` … [interrupted]` unless set otherwise) and completes
   * the message, so the user sees the cut visibly; the key's attempt is given up, so a retry writes
   * its answer as a new message. Answers outcome `interrupted`.
   */
  interrupt(): Promise<ReplyResult> {
    return this.#core.interrupt();
  }
}
