import { createParser, type EventSourceMessage } from 'eventsource-parser';
import {
  AgentMessagingError,
  ConnectionError,
  InvalidResponseError,
  RequestAbortedError,
  TimeoutError,
} from '../core/errors.js';
import { parseStreamEvent, type StreamEvent } from '../schemas/stream.js';

/** How long a stream may stay silent by default: four times the service's 15 s keep-alive. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

// An event is at most 32,000 characters of text plus its envelope; anything far larger is not the service.
const MAX_BUFFERED_CHARS = 4 * 1024 * 1024;

/** Options of {@link readStreamEvents}. */
export interface SseReadOptions {
  /** Longest silence (no bytes at all, keep-alive comments included) before a TimeoutError. */
  idleTimeoutMs?: number;
  /** Aborting it cancels the body and rejects the pending read with a RequestAbortedError. */
  signal?: AbortSignal;
}

/**
 * Reads a `text/event-stream` body into validated stream events, in order. Keep-alive comments
 * are skipped, unknown event types pass through as they came, a malformed event throws an
 * InvalidResponseError. Leaving the loop early (break, throw, abort, idle timeout) cancels the
 * body, which closes the connection.
 */
export async function* readStreamEvents(
  body: ReadableStream<Uint8Array>,
  options: SseReadOptions = {},
): AsyncGenerator<StreamEvent, void, undefined> {
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const ready: StreamEvent[] = [];
  let failure: Error | undefined;
  const parser = createParser({
    maxBufferSize: MAX_BUFFERED_CHARS,
    onEvent: (message) => {
      if (failure === undefined) {
        const decoded = decodeEvent(message);
        if (decoded instanceof Error) failure = decoded;
        else ready.push(decoded);
      }
    },
    onError: (error) => {
      // Unknown fields and bad `retry:` values are ignored, as the SSE standard asks.
      if (error.type === 'max-buffer-size-exceeded') {
        failure ??= new InvalidResponseError('The event stream sent an event larger than 4 MiB.');
      }
    },
  });
  let ended = false;
  try {
    for (;;) {
      const chunk = await readWithin(reader, idleTimeoutMs, options.signal);
      if (chunk.done) {
        ended = true;
        parser.feed(decoder.decode());
      } else {
        parser.feed(decoder.decode(chunk.value, { stream: true }));
      }
      if (failure !== undefined) throw failure;
      while (ready.length > 0) yield ready.shift()!;
      if (ended) return;
    }
  } finally {
    if (!ended) await reader.cancel(failure).catch(() => {});
    reader.releaseLock();
  }
}

function decodeEvent(message: EventSourceMessage): StreamEvent | Error {
  const label = message.event ?? 'message';
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    return new InvalidResponseError(`The event stream sent a "${label}" event whose data is not JSON.`);
  }
  const parsed = parseStreamEvent(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || '(root)';
    return new InvalidResponseError(
      `The event stream sent a malformed "${label}" event: ${field}: ${issue?.message ?? 'invalid'}.`,
    );
  }
  return parsed.data;
}

/** One read of the body, bounded by the idle timeout and the caller's signal. */
function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  idleTimeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(aborted(signal));
      return;
    }
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      settle();
      reject(aborted(signal));
    };
    const timer = setTimeout(() => {
      settle();
      reject(new TimeoutError(`The event stream sent nothing for ${idleTimeoutMs} ms (idleTimeoutMs).`));
    }, idleTimeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    reader.read().then(
      (result) => {
        settle();
        resolve(result);
      },
      (error: unknown) => {
        settle();
        reject(readFailure(error, signal));
      },
    );
  });
}

function readFailure(error: unknown, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) return aborted(signal);
  if (AgentMessagingError.is(error)) return error;
  return new ConnectionError('The event stream broke before it was complete.', { cause: error });
}

function aborted(signal: AbortSignal | undefined): RequestAbortedError {
  return new RequestAbortedError('The stream was aborted by its signal.', { cause: signal?.reason });
}
