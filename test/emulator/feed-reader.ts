// Reads GET /_mock/events the way the page's EventSource does: parsed frames, each checked against
// the shared MockEvent schema and against its `event:` line.
import { type MockEvent, mockSchemas } from 'agent-messaging/testing';
import { createParser } from 'eventsource-parser';

/** The live feed of one connection, with waits on what arrived. */
export class FeedReader {
  readonly events: MockEvent[] = [];
  readonly comments: string[] = [];
  readonly #controller = new AbortController();
  #waiters: (() => void)[] = [];
  #ended = false;

  /** Connects to `${baseUrl}/_mock/events`; resolves once the answer's headers arrived. */
  static async connect(baseUrl: string): Promise<{ reader: FeedReader; response: Response }> {
    const reader = new FeedReader();
    const response = await fetch(`${baseUrl}/_mock/events`, { signal: reader.#controller.signal });
    reader.#read(response);
    return { reader, response };
  }

  #read(response: Response): void {
    const parser = createParser({
      onEvent: (message) => {
        const event = mockSchemas.MockEvent.parse(JSON.parse(message.data));
        if (message.event !== event.type) throw new Error(`event line ${message.event} != ${event.type}`);
        this.events.push(event);
        this.#wake();
      },
      onComment: (comment) => {
        this.comments.push(comment.trim());
        this.#wake();
      },
    });
    const body = response.body?.getReader();
    const decoder = new TextDecoder();
    void (async () => {
      try {
        for (;;) {
          const chunk = await body?.read();
          if (!chunk || chunk.done) break;
          parser.feed(decoder.decode(chunk.value, { stream: true }));
        }
      } catch {
        // Closed by close() or by the server: the waits below report it.
      }
      this.#ended = true;
      this.#wake();
    })();
  }

  /** Waits until an event matches `predicate`; fails if the feed ends first. */
  async waitFor(predicate: (event: MockEvent) => boolean): Promise<MockEvent> {
    for (;;) {
      const found = this.events.find(predicate);
      if (found) return found;
      if (this.#ended) throw new Error(`the feed ended; got ${this.events.map((e) => e.type).join(', ')}`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Waits until a comment equal to `text` arrived. */
  async waitForComment(text: string): Promise<void> {
    while (!this.comments.includes(text)) {
      if (this.#ended) throw new Error('the feed ended before the comment');
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Resolves once the feed has ended (server closed it, or close() was called). */
  async ended(): Promise<void> {
    while (!this.#ended) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  /** Disconnects. */
  close(): void {
    this.#controller.abort();
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}
