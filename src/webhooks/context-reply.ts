// The replies of one run: a handler's (`ctx.reply`, `ctx.replyWithFile`, `ctx.typing`) or a question
// timeout's. A bot's answer that a redelivery cannot double, a failing model cannot leave empty or
// silently cut, and a second instance cannot interleave (issue 11, for bots). Invariants:
// - the n-th reply of a run has the same key on every delivery of the event (every run of the
//   timeout), file replies numbered with the text ones, so a redelivery of a finished reply answers
//   it (`replayed`) instead of sending again;
// - once the run's signal fired (interrupted, its lock lost, past maxHandlerMs, its timeout taken
//   over) a reply is refused: a newer run answers the conversation now;
// - a streamed reply shows typing until its first chunk and makes its message only then (and again
//   while a model's tool call runs, until its next text); the typing renewals stop when the reply
//   ends, whatever way;
// - a failure reaches the handler (so the delivery is answered 500 and retried), and the retry of a
//   reply cut short writes its answer as a new message: the attempt counter and the writer's lease
//   live in the bot's store, so a shared store gives the same guarantee across instances;
// - a file reply's attachment id is kept in the bot store under the reply's key before the send, so
//   a retry sends the same body under the same key (the service replays it) instead of uploading
//   again and posting a second message.
//
// The typing indicator: the service lets a `start` lapse after 10 s (PROTOCOL.md section 10), so it is
// renewed a little before that, and `stop` is sent once at the end. A failed typing call is logged and
// never thrown: the indicator is cosmetic and must not fail the reply it decorates.

import * as z from 'zod/mini';
import { RequestAbortedError } from '../core/errors.js';
import { idempotencyKeyFor } from '../core/idempotency.js';
import { count, parseInput, text } from '../core/validate.js';
import type { ToolCallInfo } from '../llm/stream-pieces.js';
import type { UploadData } from '../resources/attachments.js';
import type { SendBlock } from '../schemas/messages.js';
import { type ReplySource, replySource } from '../streaming/pipe-reply.js';
import {
  annotate,
  annotateActive,
  childSpan,
  endSpan,
  inSpan,
  recordMetric,
  recoveriesOf,
  type SpanAttributes,
} from '../telemetry.js';
import type { BotFileReplyResult, BotReplyOptions, BotReplyResult, BotRuntime } from './bot-types.js';
import { DEDUPE_RETENTION_MS } from './lanes.js';
import { createDeadlines, type Deadline } from './timers.js';

/** One quick reply: a button whose click posts `label` and delivers `{ actionId, value }` back. */
export interface QuickReply {
  actionId: string;
  label: string;
  /** The value delivered with the click; `actionId` when absent. */
  value?: string;
}

/** Options of `ctx.replyWithFile`. */
export interface FileReplyOptions {
  /** The file's name as the user sees it. */
  name: string;
  /** Its MIME type; an `image/*` type is sent as an image block, anything else as a file block. */
  mime_type: string;
  /** Text sent above the file, in the same message. */
  caption?: string;
}

/** Stops a typing indicator: no more renewals, then one `stop`. Calling it again does nothing. */
export type StopTyping = () => Promise<void>;

/** How a question ended, as `metadata.question_end` of the messages its ending run sends. @internal */
export interface QuestionEnd {
  id: string;
  outcome: 'answered' | 'timed_out' | 'gave_up' | 'cancelled';
}

/** Where one run's replies go and how they are keyed. @internal */
export interface ReplyTarget {
  conversationId: string;
  /** The message replied to: the received one, or the question a timeout answers. */
  messageId: string;
  /** The n-th reply's Idempotency-Key is `idempotencyKeyFor(keyBase, keyName)`, then `keyName-n`. */
  keyBase: string;
  keyName: string;
  /** Fires when the run should stop: replies are refused, a streaming one ends marked interrupted. */
  signal: AbortSignal;
  /** What a logged typing failure names (the webhook id, or the question). */
  log: Record<string, string>;
  /** The question this run ended, if it did: every reply it sends from then on names it. */
  ended(): QuestionEnd | undefined;
}

/**
 * What `ctx.reply` checks of its options before anything is sent (a string reply takes no lease, but
 * a bad value is a mistake all the same). Made at the first reply, so an app that imports only the
 * client bundles none of it.
 */
function replyOptionsSchema() {
  return z.object({
    quickReplies: z.optional(
      // The shared schema checks the limits (10 actions, lengths) when the send is built.
      z
        .array(z.looseObject({ actionId: text(), label: text(), value: z.optional(text()) }))
        .check(z.minLength(1, { error: 'must be a non-empty array' })),
    ),
    quickRepliesAt: z.optional(z.enum(['start', 'completion'])),
    writerLeaseMs: z.optional(count(1)),
    writerWaitMs: z.optional(count(0)),
  });
}
let replyOptionChecks: ReturnType<typeof replyOptionsSchema> | undefined;

/** What `ctx.replyWithFile` checks of its options (made per call: a file reply is rare). */
const fileReplyOptionsSchema = () =>
  z.object({
    name: text(),
    mime_type: z.string().check(z.regex(/\S/, { error: 'must be a MIME type such as image/png' })),
    caption: z.optional(z.string()),
  });

/** The replies of one run, and the `finish` that stops the typing indicators it left on. @internal */
export function createReplies(bot: BotRuntime, to: ReplyTarget) {
  const { client } = bot;
  const { conversationId, signal } = to;
  let sent = 0;
  const nextKey = () => {
    sent += 1;
    return idempotencyKeyFor(to.keyBase, sent === 1 ? to.keyName : `${to.keyName}-${sent}`);
  };
  // `ctx.typing()`'s indicators, and the `stop`s of the streamed replies' own.
  const shown = new Set<StopTyping>();
  const stopping = new Set<Promise<void>>();
  // The run's typing renewals, every 8 s (under the service's 10 s lifetime), under one timer; a
  // forgotten indicator keeps no process alive.
  const renewals = createDeadlines(8000, false);
  const sendTyping = (state: 'start' | 'stop') =>
    client.conversations
      .typing(conversationId, { state })
      .then(undefined, (error: unknown) => bot.warn('a typing call failed', { ...to.log, error }));
  /**
   * Starts the indicator and renews it until stopped, each renewal scheduled only after the last one
   * answered, so slow answers never pile up.
   */
  const showTyping = async (): Promise<StopTyping> => {
    let stopped = false;
    let renewal: Deadline | undefined;
    let pending = sendTyping('start');
    const renew = () => {
      renewal = renewals.add(() => {
        pending = sendTyping('start');
        void pending.then(() => {
          if (!stopped) renew();
        });
      }, undefined);
    };
    await pending;
    renew();
    let ended: Promise<void> | undefined;
    return () => {
      ended ??= (async () => {
        stopped = true;
        if (renewal) renewals.remove(renewal);
        // Let a renewal in flight land first, so the `stop` is the last state the service sees.
        await pending;
        await sendTyping('stop');
      })();
      return ended;
    };
  };

  /** Refuses once the run's signal fired, else sends inside the reply's span. */
  const guarded = <T extends object>(what: string, transport: Transport, send: () => Promise<T>) => {
    if (!signal.aborted) return inReplySpan(transport, send);
    const why = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
    return Promise.reject<T>(
      new RequestAbortedError(`${what} was refused: this run was stopped. ${why}`, { cause: signal.reason }),
    );
  };

  const sendReply = async (input: string | ReplySource, options: BotReplyOptions = {}) => {
    replyOptionChecks ??= replyOptionsSchema();
    parseInput(replyOptionChecks, options, 'ctx.reply');
    const { writerLeaseMs = bot.lockTtlMs, writerWaitMs, quickReplies = [] } = options;
    const idempotencyKey = nextKey();
    const replyTo = options.replyToMessageId === undefined ? to.messageId : options.replyToMessageId;
    // Every message of a run that ended a question says so.
    const end = to.ended();
    const metadata = end ? { ...options.metadata, question_end: end } : options.metadata;
    const fields = {
      ...(replyTo === null ? {} : { replyToMessageId: replyTo }),
      ...(metadata === undefined ? {} : { metadata }),
    };
    const buttons: SendBlock[] = quickReplies.length ? [quickRepliesBlock(quickReplies)] : [];
    const atCompletion = options.quickRepliesAt === 'completion' && typeof input !== 'string';
    // Taken now, used or not, so the replies after this one keep their keys on every delivery.
    const buttonsKey = atCompletion && buttons.length ? nextKey() : undefined;
    if (typeof input === 'string') {
      // A whole text is one plain send: one request, deduplicated by the service under its key.
      const body = buttons.length
        ? { content: [{ type: 'text' as const, text: input }, ...buttons], fallbackText: input, ...fields }
        : { text: input, ...fields };
      const { data, response } = await client.messages
        .send(conversationId, body, { idempotencyKey })
        .withResponse();
      const replayed = response.headers.get('idempotent-replayed') === 'true';
      return {
        message_id: data.message.id,
        status: data.message.status,
        text: input,
        outcome: replayed ? ('replayed' as const) : ('complete' as const),
      };
    }
    // A tool call after text shows typing again until the next text: the model is still working.
    const typing = async (): Promise<StopTyping> => (shown.size ? async () => {} : showTyping());
    let stopped: Promise<void> | undefined;
    const onToolCall = async (call: ToolCallInfo) => {
      if (stopped !== undefined) {
        await stopped;
        stopTyping = await typing();
        stopped = undefined;
      }
      await options.onToolCall?.(call);
    };
    const source = replySource(input, 'ctx.reply', onToolCall);
    let stopTyping = await typing();
    const stop = () => {
      if (stopped === undefined) {
        stopped = stopTyping();
        stopping.add(stopped);
      }
    };
    try {
      // Quick replies ride along as a block after the text block the writer fills, or come after it.
      const content =
        buttons.length && !atCompletion ? { content: [{ type: 'text' as const, text: '' }, ...buttons] } : {};
      const result = await client.messages.reply(conversationId, typingUntilFirst(source, stop), {
        ...fields,
        ...content,
        idempotencyKey,
        signal,
        ledger: bot.store,
        writerLeaseMs,
        ...(writerWaitMs === undefined ? {} : { writerWaitMs }),
      });
      if (buttonsKey !== undefined && result.outcome !== 'interrupted') {
        const labels = quickReplies.map((button) => button.label).join(' | ');
        const body = { content: buttons, fallbackText: labels, ...fields };
        await client.messages.send(conversationId, body, { idempotencyKey: buttonsKey });
      }
      return result;
    } finally {
      stop();
    }
  };

  const sendFile = async (data: UploadData, options: FileReplyOptions): Promise<BotFileReplyResult> => {
    const idempotencyKey = nextKey();
    parseInput(fileReplyOptionsSchema(), options, 'ctx.replyWithFile');
    const remembered = `reply-file:${idempotencyKey}`;
    let attachmentId = await bot.store.get(remembered);
    if (attachmentId === undefined) {
      const { name, mime_type } = options;
      attachmentId = (await client.attachments.upload(data, { name, mime_type }, { signal })).attachment_id;
      await bot.store.set(remembered, attachmentId, DEDUPE_RETENTION_MS);
    }
    const type = options.mime_type.toLowerCase().startsWith('image/') ? 'image' : 'file';
    const content: SendBlock[] = [
      ...(options.caption ? [{ type: 'text' as const, text: options.caption }] : []),
      { type, attachmentId },
    ];
    const body = { content, fallbackText: options.caption || options.name, replyToMessageId: to.messageId };
    const { message } = await client.messages.send(conversationId, body, { idempotencyKey });
    return { message_id: message.id, status: message.status, attachment_id: attachmentId };
  };

  const finish = async () => {
    await Promise.all([...shown].map((stop) => stop()));
    await Promise.all(stopping);
  };

  return {
    reply: (input: string | ReplySource, options?: BotReplyOptions): Promise<BotReplyResult> =>
      guarded('ctx.reply', typeof input === 'string' ? 'send' : 'stream', () => sendReply(input, options)),
    replyWithFile: (data: UploadData, options: FileReplyOptions) =>
      guarded('ctx.replyWithFile', 'file', () => sendFile(data, options)),
    /** `ctx.typing()`: shows the indicator until the run ends or the returned function is called. */
    typing: async (): Promise<StopTyping> => {
      const stop = await showTyping();
      shown.add(stop);
      return stop;
    },
    /** A promise while typing indicators are still to stop; `undefined` when none is. */
    finish: (): Promise<void> | undefined => (shown.size || stopping.size ? finish() : undefined),
  };
}

/** The actions block of quick replies (layout quick_replies, each a postback). */
const quickRepliesBlock = (quickReplies: readonly QuickReply[]): SendBlock => ({
  type: 'actions',
  layout: 'quick_replies',
  actions: quickReplies.map(({ actionId, label, value }) => ({
    actionId,
    label,
    behavior: { type: 'postback' as const, value: value ?? actionId },
  })),
});

/**
 * The source's chunks. A non-empty one (the reply's message appears with the first) stops the typing
 * once the reply took it, when it asks for the next chunk: the reply's start and first token are not
 * queued behind the `stop` (issue 17, time to first token).
 */
async function* typingUntilFirst(source: AsyncIterable<string>, stop: () => void): AsyncGenerator<string> {
  const started = performance.now();
  let first = true;
  for await (const chunk of source) {
    if (chunk !== '' && first) {
      first = false;
      annotateActive({ 'reply.time_to_first_token_ms': Math.round(performance.now() - started) });
    }
    yield chunk;
    if (chunk !== '') stop();
  }
}

type Transport = 'send' | 'stream' | 'file';

/**
 * Runs one reply inside its span ('agent-messaging.reply', under the active one): how it went out
 * (`send`, `stream`, or `append` once the writer fell back), its characters, its outcome and the
 * recoveries its writer made. An interrupted or failed reply ends the span with an error status.
 */
async function inReplySpan<T extends object>(transport: Transport, send: () => Promise<T>): Promise<T> {
  const span = childSpan('agent-messaging.reply', { 'reply.transport': transport });
  const started = performance.now();
  const end = (outcome: string, error: unknown, attributes: SpanAttributes = {}) => {
    annotate(span, { 'reply.outcome': outcome, 'reply.recoveries': recoveriesOf(span), ...attributes });
    recordMetric('replies', 1, { 'reply.outcome': outcome, 'reply.transport': transport });
    endSpan(span, error);
  };
  try {
    const result = await inSpan(span, send);
    const { text, outcome = 'complete' } = result as { text?: string; outcome?: string };
    const cut =
      outcome === 'interrupted' ? new Error('the reply was cut short and marked interrupted') : undefined;
    end(outcome, cut, {
      'reply.chars': text?.length,
      'reply.duration_ms': Math.round(performance.now() - started),
    });
    return result;
  } catch (error) {
    end('failed', error);
    throw error;
  }
}
