// What streaming calls take: their options and the send shape they start with, checked (bad input
// is a ValidationError before sending), and the start's Idempotency-Key.
import * as z from 'zod/mini';
import { ValidationError } from '../core/errors.js';
import { idempotencyKeyFor, randomIdempotencyKey } from '../core/idempotency.js';
import type { RequestOptions } from '../core/options.js';
import { count, parseInput, pathId, RequestOptionsSchema } from '../core/validate.js';
import { AGENT_SEND_SCHEMA, ConversationId } from '../schemas/common.js';
import { type MessageStatus, SendMessageRequest } from '../schemas/messages.js';
import type { BotStore } from '../store/bot-store.js';
import { defaultLedger } from './reply-lease.js';
import { DEFAULT_PROGRESS_TIMEOUT_MS } from './stream-sink.js';
import type { CoalesceOptions } from './write-buffer.js';

/** Options of `messages.stream()`. */
export interface StreamOptions extends RequestOptions {
  /**
   * Longest time without an event (keep-alive comments and junk bytes do not reset it) before a
   * TimeoutError (default 60000).
   * @example idleTimeoutMs: 120_000
   */
  idleTimeoutMs?: number;
  /**
   * The triggering event's id: the `Idempotency-Key` is derived from it, so a redelivered event
   * cannot start a second message.
   * @example eventId: event.eventId
   */
  eventId?: string;
}

/** How a reply reaches the service. */
export type ReplyTransport = 'auto' | 'stream' | 'append';

/** Options of `messages.startReply()` and `messages.reply()`. */
export interface ReplyOptions extends StreamOptions {
  /**
   * `stream`: one Streamable HTTP request; `append`: append and complete calls; `auto` (default):
   * stream when the runtime and the service can, else append.
   * @example transport: 'append'
   */
  transport?: ReplyTransport;
  /**
   * When buffered text is sent (default 256 characters or 100 ms, whichever comes first).
   * @example coalesce: { chars: 64, ms: 50 }
   */
  coalesce?: CoalesceOptions;
  /**
   * The note appended to a reply cut short (its source failed, or it was interrupted), so the user
   * sees the cut; `''` for none (default ` … [interrupted]`).
   * @example interruptedNote: ' [cut off]'
   */
  interruptedNote?: string;
  /**
   * The store where writers of one key coordinate (its lock `reply-lease:{key}`, its counter
   * `reply-attempt:{key}`); a memory store of this process by default. A shared store (Redis) holds
   * across processes; a bot's `ctx.reply` uses the bot's store.
   * @example ledger: createRedisStore({ client })
   */
  ledger?: BotStore;
  /**
   * How long a second writer of the same key waits for the first to finish before a ConflictError
   * (default 10000). After the wait it answers the first writer's finished reply (`replayed`).
   * @example writerWaitMs: 0
   */
  writerWaitMs?: number;
  /**
   * How long a writer's lease on its key lasts unless renewed (default 30000; a bot's `ctx.reply`
   * uses the bot's `lockTtlMs`); it is renewed every second (every third of it when shorter) while the
   * writer writes, also while a step waits on the service. A writer whose renewal fails (a stall
   * outlived the lease, or another writer took it) stops with a ConflictError `reply_lease_lost` and
   * writes nothing more. A dead writer's key is taken over once its lease expired.
   * @example writerLeaseMs: 60_000
   */
  writerLeaseMs?: number;
  /**
   * How long streamed text or a sent completion may go unacknowledged before the reply falls back
   * to append and reads back (default 5000; keep-alive comments do not count as acknowledgement).
   * @example progressTimeoutMs: 2_000
   */
  progressTimeoutMs?: number;
  /**
   * Whether this runtime can send a streamed request body; detected when absent. `false` makes
   * `auto` use append, as on a runtime without the feature.
   * @example streamedBodies: false
   */
  streamedBodies?: boolean;
}

/**
 * How a reply ended: `complete` (all its text, as written), `interrupted` (cut short, its message
 * marked with the interrupted note), `replayed` (an earlier writer of the same key finished it; this
 * one wrote nothing).
 */
export type ReplyOutcome = 'complete' | 'interrupted' | 'replayed';

/** What `complete()` answers. */
export interface ReplyResult {
  /** The message id. */
  message_id: string;
  /** `sent` once completed. */
  status: z.output<typeof MessageStatus>;
  /** The message's revision: one per applied append. */
  revision: number;
  /** The text of the reply's block, exactly as the service holds it. */
  text: string;
  /** How the reply ended. */
  outcome: ReplyOutcome;
}

const ReplyOptionsSchema = z.extend(RequestOptionsSchema, {
  transport: z.optional(z.enum(['auto', 'stream', 'append'])),
  eventId: z.optional(z.string().check(z.regex(/\S/, { error: 'must be a non-blank string' }))),
  coalesce: z.optional(z.object({ chars: z.optional(count(1)), ms: z.optional(count(1)) })),
  streamedBodies: z.optional(z.boolean()),
  idleTimeoutMs: z.optional(count(1)),
  interruptedNote: z.optional(z.string().check(z.maxLength(200))),
  ledger: z.optional(
    z.custom<BotStore>((value) => typeof (value as BotStore | null)?.acquireLock === 'function', {
      error: 'must be a BotStore (acquireLock, renewLock, releaseLock, get, increment)',
    }),
  ),
  writerWaitMs: z.optional(count(0)),
  writerLeaseMs: z.optional(count(1)),
  progressTimeoutMs: z.optional(count(1)),
});

/** The note of a reply cut short, by default. */
export const DEFAULT_INTERRUPTED_NOTE = ' … [interrupted]';

/** Options checked, defaults filled. @internal */
export type CheckedReplyOptions = ReturnType<typeof checkStart>['checked'];

/** What a streamed message starts with: the send shape without `schema` and `stream`, all optional. */
export interface StreamBody {
  /** Blocks to start with; the first text block is the one the reply writes to (the service adds an empty one when none). */
  content?: SendMessageRequest['content'];
  /** Plain-text rendering. */
  fallbackText?: string;
  /** The message this one answers. */
  replyToMessageId?: string;
  /** Free-form data of the agent, such as a run id. */
  metadata?: Record<string, unknown>;
}

/** The checked send shape of a streaming send. */
function streamingSendShape(body: StreamBody | undefined, context: string) {
  const value = body === undefined ? {} : body;
  const fields =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined))
      : undefined;
  if (fields === undefined) {
    const message = 'must be an object of send fields (content, fallbackText, replyToMessageId, metadata)';
    throw new ValidationError([{ field: 'body', message }], context);
  }
  const shape = { content: [], ...fields, schema: AGENT_SEND_SCHEMA, stream: true };
  return parseInput(SendMessageRequest, shape, context);
}

/**
 * A streaming call's input, checked before anything is sent (the conversation id, which the
 * transport encodes into the path; the options, each bad one named, with defaults filled; the send
 * shape), and its start's `Idempotency-Key`:
 * the caller's, else derived from the event, else random. The key is fixed before the first
 * attempt, so every retry of the start carries the same key.
 * @internal
 */
export function checkStart(
  conversationId: string,
  body: StreamBody | undefined,
  options: ReplyOptions | undefined,
  operation: string,
) {
  pathId(ConversationId, conversationId, 'conversationId', operation);
  const parsed = parseInput(ReplyOptionsSchema, options ?? {}, operation);
  const { idempotencyKey, signal, timeoutMs, headers, maxRetries, coalesce, eventId } = parsed;
  const request: RequestOptions = { idempotencyKey, signal, timeoutMs, headers, maxRetries };
  // The options with their defaults filled.
  const checked = {
    ...parsed,
    request,
    transport: parsed.transport ?? 'auto',
    // When buffered text is sent by default, as Slack's `chatStream` buffers.
    coalesce: { chars: coalesce?.chars ?? 256, ms: coalesce?.ms ?? 100 },
    interruptedNote: parsed.interruptedNote ?? DEFAULT_INTERRUPTED_NOTE,
    ledger: parsed.ledger ?? defaultLedger(),
    writerWaitMs: parsed.writerWaitMs ?? 10_000,
    // A lease outlives a stalled step (a progress deadline plus a read-back) and is renewed while held.
    writerLeaseMs: parsed.writerLeaseMs ?? 30_000,
    progressTimeoutMs: parsed.progressTimeoutMs ?? DEFAULT_PROGRESS_TIMEOUT_MS,
  };
  const shape = streamingSendShape(body, operation);
  const key =
    idempotencyKey ?? (eventId === undefined ? randomIdempotencyKey() : idempotencyKeyFor(eventId, 'reply'));
  return { checked, shape, key };
}
