// The reader: a `text/event-stream` body as validated stream events, bounded by time without an event.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { AgentMessagingError, ConnectionError, InvalidResponseError, TimeoutError } from '../core/errors.js';
import { abortedError } from '../core/retry.js';
import { type MessagePatchEvent, parseStreamEvent, type StreamEvent } from '../schemas/stream.js';

/** How long a stream may stay silent by default: four times the service's 15 s keep-alive. */
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

// An event is at most 32,000 characters of text plus its envelope; anything far larger is not the service.
const MAX_BUFFERED_CHARS = 4 * 1024 * 1024;

/** Options of {@link readStreamEventBatches}. */
export interface SseReadOptions {
  /** Longest time without an event (keep-alive comments and other bytes do not count) before a TimeoutError. */
  idleTimeoutMs?: number;
  /** Aborting it cancels the body and rejects the pending read with a RequestAbortedError. */
  signal?: AbortSignal;
}

/**
 * Reads a `text/event-stream` body into validated stream events, in order, one array per chunk of
 * the body (never empty): the events of a chunk arrive together, so a reader that hands them out one
 * by one saves an async step per event. Keep-alive comments are skipped, unknown event types pass
 * through as they came, a malformed event throws an InvalidResponseError. Leaving the loop early
 * (break, throw, abort, idle timeout) cancels the body, which closes the connection.
 */
export async function* readStreamEventBatches(
  body: ReadableStream<Uint8Array>,
  options: SseReadOptions = {},
): AsyncGenerator<StreamEvent[], void, undefined> {
  const { signal } = options;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let ready: StreamEvent[] = [];
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
  // A timeout or an abort cancels the reader, which ends a pending read at once with `done`;
  // `failure` then says why. No promise or timer per read.
  const interrupt = (error: Error) => {
    failure ??= error;
    reader.cancel(error).catch(() => {});
  };
  // The idle timeout: time a read waits with no event. Keep-alive comments and bytes that make no
  // event do not count as progress, so a live but silent service cannot hold a reader forever; time
  // the consumer spends between reads does not count either. A timer per read would cost a timer and
  // a promise per chunk, and a live stream is a chunk per event; so one timer runs, and when it fires
  // it checks how long the current read has really waited, timing out or sleeping for what is left.
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  /** When the pending read started waiting for an event (`performance.now()`), or -1. */
  let waitingSince = -1;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (ms: number) => {
    timer = setTimeout(onTimer, ms);
    // The stream's own connection keeps a process alive while it waits; this timer should not.
    timer.unref?.();
  };
  const onTimer = () => {
    timer = undefined;
    // Between reads the consumer is busy; the next read arms the timer again.
    if (waitingSince < 0) return;
    const left = waitingSince + idleTimeoutMs - performance.now();
    // Node's timers are whole milliseconds and may fire a fraction early: under 1 ms left is due.
    if (left >= 1) arm(left);
    else
      interrupt(new TimeoutError(`The event stream sent no event for ${idleTimeoutMs} ms (idleTimeoutMs).`));
  };
  const onAbort = () => interrupt(abortedError(signal as AbortSignal));
  let ended = false;
  try {
    if (signal?.aborted) throw abortedError(signal);
    signal?.addEventListener('abort', onAbort, { once: true });
    for (;;) {
      if (waitingSince < 0) waitingSince = performance.now();
      if (timer === undefined) arm(idleTimeoutMs);
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        throw failure ?? readFailure(error, signal);
      }
      if (failure !== undefined) throw failure;
      if (chunk.done) {
        ended = true;
        parser.feed(decoder.decode());
      } else {
        parser.feed(decoder.decode(chunk.value, { stream: true }));
      }
      if (failure !== undefined) throw failure;
      // Only an event is progress: keep-alive comments and partial lines leave the clock running.
      if (ready.length > 0 || ended) waitingSince = -1;
      if (ready.length > 0) {
        const batch = ready;
        ready = [];
        yield batch;
      }
      if (ended) return;
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    if (!ended) await reader.cancel(failure).catch(() => {});
    reader.releaseLock();
  }
}

function decodeEvent(message: EventSourceMessage): StreamEvent | Error {
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    return new InvalidResponseError(
      `The event stream sent a "${labelOf(message)}" event whose data is not JSON.`,
    );
  }
  // Nearly every event is a patch: checked by hand, the object JSON.parse made is the event.
  if (isWellFormedPatchEvent(data)) return data;
  const parsed = parseStreamEvent(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || '(root)';
    return new InvalidResponseError(
      `The event stream sent a malformed "${labelOf(message)}" event: ${field}: ${issue?.message ?? 'invalid'}.`,
    );
  }
  return parsed.data;
}

const labelOf = (message: EventSourceMessage) => message.event ?? 'message';

function readFailure(error: unknown, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) return abortedError(signal);
  if (AgentMessagingError.is(error)) return error;
  return new ConnectionError('The event stream broke before it was complete.', { cause: error });
}

// `message.patch` is nearly every event of a stream, and the zod check costs more than JSON.parse
// of the event itself; this check by hand accepts exactly what `MessagePatchEvent` accepts (a
// property test holds the two together), so the reader can skip zod for a well-formed patch and
// fall back to it, errors and all, for anything else.
type Fields = Record<string, unknown>;

/**
 * True when `data` (as JSON.parse made it) is a `message.patch` event with every field its schema
 * requires; the object can then be used as it is, as zod would have returned an equal copy.
 */
export function isWellFormedPatchEvent(data: unknown): data is MessagePatchEvent {
  if (!isPlainRecord(data)) return false;
  const event = data as Fields;
  if (
    event.type !== 'message.patch' ||
    typeof event.schema !== 'string' ||
    typeof event.eventId !== 'string' ||
    typeof event.conversationId !== 'string' ||
    !Number.isSafeInteger(event.seq) ||
    typeof event.messageId !== 'string'
  ) {
    return false;
  }
  const patch = event.patch;
  if (!isPlainRecord(patch)) return false;
  const fields = patch as Fields;
  return (
    typeof fields.op === 'string' &&
    typeof fields.blockId === 'string' &&
    typeof fields.path === 'string' &&
    typeof fields.value === 'string'
  );
}

/**
 * An object zod's `looseObject` would copy unchanged. zod drops an own `__proto__` key from its
 * copy (assigning it would replace the copy's prototype), so such an object is left to zod.
 */
function isPlainRecord(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !Object.hasOwn(value, '__proto__')
  );
}
