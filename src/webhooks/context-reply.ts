// `ctx.reply()`: a bot's answer that a redelivery cannot double, a failing model cannot leave empty
// or silently cut, and a second instance cannot interleave (issue 11, for bots). Invariants:
// - the n-th reply of a run has the same key on every delivery of the event, so a redelivery of a
//   finished reply answers it (`replayed`) instead of sending again;
// - a streamed reply shows typing until its first chunk and makes its message only then (and again
//   while a model's tool call runs, until its next text); the typing renewals stop when the reply
//   ends, whatever way;
// - a failure reaches the handler (so the delivery is answered 500 and retried), and the retry of a
//   reply cut short writes its answer as a new message: the attempt counter and the writer's lease
//   live in the bot's store, so a shared store gives the same guarantee across instances.

import * as z from 'zod/mini';
import type { AgentClient } from '../client/agent-client.js';
import { count, parseInput } from '../core/validate.js';
import type { ToolCallInfo } from '../llm/stream-pieces.js';
import type { BotStore } from '../store/bot-store.js';
import { type ReplySource, replySource } from '../streaming/pipe-reply.js';
import { storeLedger } from '../streaming/store-ledger.js';
import { annotateActive } from '../telemetry.js';
import type { BotReplyOptions, BotReplyResult } from './bot-types.js';
import { quickRepliesBlock, quickRepliesSchema } from './rich-replies.js';
import { keepTyping, type StopTypingAfter } from './typing.js';

/**
 * What `ctx.reply` checks of its options before anything is sent (a string reply takes no lease, but
 * a bad value is a mistake all the same). Made at the first reply given options, so an app that
 * imports only the client bundles none of it.
 */
function replyOptionsSchema() {
  return z.object({
    quickReplies: z.optional(quickRepliesSchema()),
    quickRepliesAt: z.optional(z.enum(['start', 'completion'])),
    writerLeaseMs: z.optional(count(1)),
    writerWaitMs: z.optional(count(0)),
  });
}
let replyOptionChecks: ReturnType<typeof replyOptionsSchema> | undefined;

/** What the message context passes in. @internal */
export interface ContextReplyDeps {
  client: AgentClient;
  conversationId: string;
  /** The received message: replies answer it unless told otherwise. */
  messageId: string;
  /**
   * The next reply's key: the n-th reply of a run gets the same key on every delivery of the event
   * (numbered with the run's file replies), so a redelivery replays each reply instead of sending again.
   */
  nextReplyKey: () => string;
  /** Fires when the run should stop: a streaming reply then ends marked, outcome `interrupted`. */
  signal: AbortSignal;
  /** The bot's store, where reply leases and attempt counters live. */
  store: BotStore;
  /**
   * A streamed reply's writer lease unless the reply sets its own: the bot's `lockTtlMs`, so a killed
   * instance's lease is gone when the service's retry runs the message again.
   */
  writerLeaseMs: number;
  typingRenewMs: number | undefined;
  /** True while the handler shows typing itself (`ctx.typing()`): the reply then starts none of its own. */
  typingShown?: () => boolean;
  /** Reports a failure that must not fail the reply (a typing call). */
  warn(error: unknown): void;
}

/**
 * Makes the `reply` of one handler run, and the `finish` that waits for its typing indicators to stop.
 * @internal
 */
export function createContextReply(deps: ContextReplyDeps): {
  reply: (input: string | ReplySource, options?: BotReplyOptions) => Promise<BotReplyResult>;
  finish: () => Promise<void>;
} {
  const { client, conversationId } = deps;
  const ledger = storeLedger(deps.store);
  const stopping = new Set<Promise<void>>();

  const reply = async (input: string | ReplySource, options: BotReplyOptions = {}) => {
    replyOptionChecks ??= replyOptionsSchema();
    parseInput(replyOptionChecks, options, 'ctx.reply');
    const { writerLeaseMs = deps.writerLeaseMs, writerWaitMs } = options;
    const idempotencyKey = deps.nextReplyKey();
    const replyTo = options.replyToMessageId === undefined ? deps.messageId : options.replyToMessageId;
    const fields = {
      ...(replyTo === null ? {} : { replyToMessageId: replyTo }),
      ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
    };
    const buttons = options.quickReplies === undefined ? [] : [quickRepliesBlock(options.quickReplies)];
    const atCompletion = options.quickRepliesAt === 'completion' && typeof input !== 'string';
    // Taken now, used or not, so the replies after this one keep their keys on every delivery.
    const buttonsKey = atCompletion && buttons.length ? deps.nextReplyKey() : undefined;
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
    let stopTyping: StopTypingAfter = async () => {};
    // Settles once the reply took the first chunk (or ended): the typing `stop` waits for it, so the
    // reply's start and first token are not queued behind it (issue 17, time to first token).
    let firstTaken!: () => void;
    const taken = new Promise<void>((resolve) => {
      firstTaken = resolve;
    });
    let stopped: Promise<void> | undefined;
    const onToolCall = async (call: ToolCallInfo) => {
      if (stopped !== undefined) {
        await stopped;
        stopTyping = await showTyping();
        stopped = undefined;
      }
      await options.onToolCall?.(call);
    };
    const source = replySource(input, 'ctx.reply', onToolCall);
    const showTyping = async (): Promise<StopTypingAfter> =>
      deps.typingShown?.()
        ? async () => {}
        : keepTyping((state) => client.conversations.typing(conversationId, { state }), {
            renewMs: deps.typingRenewMs,
            onError: deps.warn,
          });
    stopTyping = await showTyping();
    const stop = () => {
      if (stopped === undefined) {
        stopped = stopTyping(taken);
        stopping.add(stopped);
      }
    };
    try {
      // Quick replies ride along as a block after the text block the writer fills, or come after it.
      const content =
        buttons.length && !atCompletion ? { content: [{ type: 'text' as const, text: '' }, ...buttons] } : {};
      const result = await client.messages.reply(conversationId, typingUntilFirst(source, stop, firstTaken), {
        ...fields,
        ...content,
        idempotencyKey,
        signal: deps.signal,
        ledger,
        writerLeaseMs,
        ...(writerWaitMs === undefined ? {} : { writerWaitMs }),
      });
      if (buttonsKey !== undefined && result.outcome !== 'interrupted') {
        const labels = (options.quickReplies ?? []).map((reply) => reply.label).join(' | ');
        const body = { content: buttons, fallbackText: labels, ...fields };
        await client.messages.send(conversationId, body, { idempotencyKey: buttonsKey });
      }
      return result;
    } finally {
      firstTaken();
      stop();
    }
  };

  const finish = async () => {
    await Promise.all(stopping);
  };
  return { reply, finish };
}

/**
 * The source's chunks. The first non-empty one (the reply's message appears with it) ends the typing
 * renewals at once; `taken` is called when the reply asks for the next chunk, so it has sent the first.
 */
async function* typingUntilFirst(
  source: AsyncIterable<string>,
  stop: () => void,
  taken: () => void,
): AsyncGenerator<string> {
  const started = performance.now();
  let first = true;
  for await (const chunk of source) {
    if (chunk !== '' && first) {
      first = false;
      annotateActive({ 'reply.time_to_first_token_ms': Math.round(performance.now() - started) });
    }
    if (chunk !== '') stop();
    yield chunk;
    taken();
  }
}
