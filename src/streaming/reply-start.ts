// Starting a reply: one writer per key (the lease), the message opened (reply-open.ts), a message a
// dead writer left streaming ended marked, and a ReplyWriter handed back for the message it writes.
import { ValidationError } from '../core/errors.js';
import { MAX_MESSAGE_TEXT } from '../schemas/messages.js';
import { checkStart, initialBlockText, type ReplyOptions, type StreamBody } from './options.js';
import { holdReply, leaseLost } from './reply-lease.js';
import { openMessage } from './reply-open.js';
import { type AppliedState, endCut, type ReplyApi, readBack } from './reply-sinks.js';
import { noteAfter, ReplyWriter } from './reply-writer.js';
import { supportsStreamedBodies } from './streamed-bodies.js';

/**
 * Starts a streamed reply and returns its writer. `transport: 'stream'` sends one Streamable HTTP
 * request; `append` uses the append and complete endpoints; `auto` (default) streams when the
 * runtime can send a streamed body and falls back to append when the service refuses it (415, 400,
 * or an answer that is not an event stream). The start carries an `Idempotency-Key` (derived from
 * `eventId` when given), so retrying it never creates a second message; when it replays a message
 * already completed, the writer is finished: writes are dropped and `complete()` answers that message.
 *
 * @example
 * const reply = await client.messages.startReply(cnv, { replyToMessageId }, { eventId: event.eventId });
 * await reply.write('Hello');
 * await reply.complete();
 */
export async function startReply(
  api: ReplyApi,
  conversationId: string,
  body?: StreamBody,
  options?: ReplyOptions,
): Promise<ReplyWriter> {
  const operation = 'messages.startReply';
  const { checked, shape, key } = checkStart(conversationId, body, options, operation);
  const streamedBodies = checked.streamedBodies ?? supportsStreamedBodies();
  if (checked.transport === 'stream' && !streamedBodies) {
    const message =
      "is 'stream', but this runtime cannot send a streamed request body (use 'auto' or 'append')";
    throw new ValidationError([{ field: 'transport', message }], operation);
  }
  const { signal } = checked.request;
  // One writer per key at a time: a second one waits here for the first, or gets a ConflictError.
  const held = await holdReply(key, {
    ledger: checked.ledger,
    ttlMs: checked.writerLeaseMs,
    waitMs: checked.writerWaitMs,
    signal,
  });
  try {
    const open = (idempotencyKey: string) =>
      openMessage({ api, conversationId, shape, checked, streamedBodies, operation, idempotencyKey });
    let { started, sink } = await open(held.messageKey);
    let finished: AppliedState | undefined;
    if (started.replayed) {
      // The key's message exists: finished by an earlier run (a delivery the service retried), or
      // streaming. Streaming with no change yet, it is this start's own (an answer lost after the
      // service committed it) or an empty one: this writer takes it over. Streaming with text, a
      // writer that died left it (this one holds the lease): it is ended, marked, and this reply
      // goes to a new message under the next attempt's key, never mixed into another's text.
      // Ended marked but not given up (its ender died or failed before that), it is a cut message
      // all the same: this reply goes to the next attempt, it does not replay the cut text.
      const state = await readBack(api, conversationId, started, checked.request);
      const note = checked.interruptedNote;
      // The note as written after text that ended with a space has lost its leading space (noteAfter).
      const markedCut = note !== '' && state.status !== 'streaming' && state.text.endsWith(note.trimStart());
      if ((state.status === 'streaming' && (state.revision ?? 0) > 0) || markedCut) {
        sink.close();
        // The read may have stalled past the lease: another run may be ending it now, so a run
        // that lost the lease marks nothing (the note would land twice).
        if (!(await held.stillHeld()))
          throw leaseLost(key, "while it read back a dead writer's message; another writer ends it");
        // A dead writer's message: its text stays, marked as cut (once: a run that died after marking
        // it left the note already), and it is completed. The reply lease makes enders take turns.
        if (state.status === 'streaming') {
          const marked = note === '' || state.text.endsWith(note.trimStart());
          await endCut(api, started, checked.request, marked ? '' : noteAfter(state.text, note), note.trim());
        }
        ({ started, sink } = await open(await held.giveUp()));
      } else if (state.status !== 'streaming') {
        finished = state;
      }
    }
    const shapeText = shape.content.reduce(
      (sum, block) => sum + (block.type === 'text' ? block.text.length : 0),
      0,
    );
    return new ReplyWriter({
      ...started,
      api,
      conversationId,
      initialText: initialBlockText(shape),
      room: MAX_MESSAGE_TEXT - shapeText,
      fallbackText: shape.fallbackText,
      sink,
      ...(finished ? { finished } : {}),
      held,
      request: checked.request,
      coalesce: checked.coalesce,
      interruptedNote: checked.interruptedNote,
      settleMs: Math.min(SETTLE_MS, checked.progressTimeoutMs),
      operation,
    });
  } catch (error) {
    await held.release().catch(() => {});
    throw error;
  }
}

// How long lines in flight at a cut get to land before the writer sends what is missing: a period,
// renewed while they keep landing (reply-sinks.ts, MAX_SETTLE_PERIODS).
const SETTLE_MS = 500;
