// The options of streaming calls, and their checks (bad input is a ValidationError before sending).
import type * as z from 'zod/mini';
import { ValidationError } from '../core/errors.js';
import type { RequestOptions } from '../core/options.js';
import { checkRequestOptions } from '../core/validate.js';
import type { FieldIssue } from '../schemas/issues.js';
import type { MessageStatus } from '../schemas/messages.js';
import { type CoalesceOptions, DEFAULT_COALESCE } from './write-buffer.js';

/** Options of `messages.stream()`. */
export interface StreamOptions extends RequestOptions {
  /**
   * Longest silence on the stream, keep-alive comments included, before a TimeoutError (default 60000).
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
   * Whether this runtime can send a streamed request body; detected when absent. `false` makes
   * `auto` use append, as on a runtime without the feature.
   * @example streamedBodies: false
   */
  streamedBodies?: boolean;
}

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
}

/** Options checked, defaults filled. @internal */
export interface CheckedReplyOptions {
  request: RequestOptions;
  transport: ReplyTransport;
  eventId: string | undefined;
  coalesce: Required<CoalesceOptions>;
  streamedBodies: boolean | undefined;
  idleTimeoutMs: number | undefined;
}

const positiveInt = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value > 0;

/** Checks the options of a streaming call; throws a ValidationError naming each bad option. @internal */
export function checkReplyOptions(options: ReplyOptions | undefined, context: string): CheckedReplyOptions {
  const { transport, eventId, coalesce, streamedBodies, idleTimeoutMs, ...request } = options ?? {};
  checkRequestOptions(request, context);
  const issues: FieldIssue[] = [];
  if (transport !== undefined && transport !== 'auto' && transport !== 'stream' && transport !== 'append') {
    issues.push({ field: 'transport', message: "must be 'auto', 'stream' or 'append'" });
  }
  if (eventId !== undefined && (typeof eventId !== 'string' || eventId.trim() === '')) {
    issues.push({ field: 'eventId', message: 'must be a non-blank string' });
  }
  if (coalesce !== undefined && (typeof coalesce !== 'object' || coalesce === null)) {
    issues.push({ field: 'coalesce', message: 'must be an object' });
  }
  if (coalesce?.chars !== undefined && !positiveInt(coalesce.chars)) {
    issues.push({ field: 'coalesce.chars', message: 'must be a positive integer' });
  }
  if (coalesce?.ms !== undefined && !positiveInt(coalesce.ms)) {
    issues.push({ field: 'coalesce.ms', message: 'must be a positive integer' });
  }
  if (streamedBodies !== undefined && typeof streamedBodies !== 'boolean') {
    issues.push({ field: 'streamedBodies', message: 'must be a boolean' });
  }
  if (idleTimeoutMs !== undefined && !positiveInt(idleTimeoutMs)) {
    issues.push({ field: 'idleTimeoutMs', message: 'must be a positive integer' });
  }
  if (issues.length > 0) throw new ValidationError(issues, context);
  return {
    request,
    transport: transport ?? 'auto',
    eventId,
    coalesce: { chars: coalesce?.chars ?? DEFAULT_COALESCE.chars, ms: coalesce?.ms ?? DEFAULT_COALESCE.ms },
    streamedBodies,
    idleTimeoutMs,
  };
}
