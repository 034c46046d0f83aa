// The service as a reply sees it: the client's parts it calls, the append and complete endpoints'
// options, the marked end of a cut message, and the read-back that says what was applied.

import type * as z from 'zod/mini';
import { ConflictError } from '../core/api-error.js';
import { AgentMessagingError } from '../core/errors.js';
import type { RequestOptions } from '../core/options.js';
import { sleep } from '../core/retry.js';
import type { Transport } from '../core/transport.js';
import type { ListMessagesQuery } from '../schemas/conversations.js';
import type {
  AppendRequest,
  AppendResponse,
  CompleteRequest,
  CompleteResponse,
  Message,
  MessageStatus,
} from '../schemas/messages.js';

/**
 * The parts of a client a reply uses: the resources' append, complete and history (the messages
 * resource hands them over), and the transport for the streamed start, which no JSON method covers.
 * @internal
 */
export interface ReplyApi {
  readonly transport: Transport;
  readonly messages: {
    append(
      id: string,
      blockId: string,
      body: AppendRequest,
      options?: RequestOptions,
    ): Promise<AppendResponse>;
    complete(id: string, body: CompleteRequest, options?: RequestOptions): Promise<CompleteResponse>;
  };
  readonly conversations: {
    history(id: string, query?: ListMessagesQuery, options?: RequestOptions): AsyncIterable<Message>;
  };
}

/** What a completion answers. @internal */
export interface Completion {
  status: z.output<typeof MessageStatus>;
  revision: number;
  /** The text appended to the reply's block, as the sink saw every change applied (the stream's). */
  appended?: string;
}

/**
 * A reply's request options for the append and complete endpoints: never retried blindly (appends
 * are not idempotent, so a failure is read back instead), and without the start's Idempotency-Key.
 * @internal
 */
export function appendOptions({ signal, timeoutMs, headers }: RequestOptions): RequestOptions {
  return { signal, timeoutMs, headers, maxRetries: 0 };
}

/**
 * Ends a message cut short through the append endpoint: `note` appended (nothing when it is empty)
 * and the message completed with `fallbackText`. A message another run completed meanwhile (the
 * service's 10 minute auto-complete, say) is ended already.
 * @internal
 */
export async function endCut(
  api: ReplyApi,
  { messageId, blockId }: { messageId: string; blockId: string },
  request: RequestOptions,
  note: string,
  fallbackText = note.trim(),
): Promise<void> {
  const options = appendOptions(request);
  if (note !== '') await api.messages.append(messageId, blockId, { path: '/text', value: note }, options);
  await api.messages
    .complete(messageId, { status: 'sent', fallbackText }, options)
    .catch((error: unknown) => {
      if (!(ConflictError.is(error) && error.code === 'message_not_streaming')) throw error;
    });
}

/** What the service holds of a reply. @internal */
export interface AppliedState {
  /** The text of the reply's block. */
  text: string;
  status: Message['status'];
  revision: number | undefined;
}

// A reply is among the newest messages; a conversation this busy while it streams is not expected.
const READ_BACK_LIMIT = 1_000;

/**
 * Finds the reply in history (newest first) and answers the text of its part `blockIndex`, its
 * status and its revision: exactly what the service applied. A read, so the transport retries it.
 * @internal
 */
export async function readBack(
  api: ReplyApi,
  conversationId: string,
  target: { messageId: string; blockIndex: number },
  request: RequestOptions,
): Promise<AppliedState> {
  const { signal, timeoutMs, headers } = request;
  let seen = 0;
  for await (const message of api.conversations.history(conversationId, {}, { signal, timeoutMs, headers })) {
    if (message.id === target.messageId) {
      const part = message.parts?.find((candidate) => candidate.part_index === target.blockIndex);
      return { text: part?.text ?? '', status: message.status, revision: message.revision };
    }
    if (++seen >= READ_BACK_LIMIT) break;
  }
  throw new AgentMessagingError(
    `message ${target.messageId} is not among the conversation's newest ${READ_BACK_LIMIT} messages, so the reply cannot be resumed.`,
  );
}

// How often the message is read again while lines sent before a cut may still land.
const SETTLE_POLL_MS = 50;

/**
 * The longest a settle goes on while lines keep landing, in settle periods: the protocol has no
 * fence for lines already in the service's pipeline, so the wait stays bounded (issue 11, outcome 4).
 * @internal
 */
export const MAX_SETTLE_PERIODS = 10;

/**
 * Reads the message back until its revision reaches `revision` (every change sent has landed), or
 * until `settleMs` passed without a change landing: lines in flight when a connection was cut may
 * still be applied, and text sent again before they land would be doubled. A service still draining
 * its backlog (the revision grows) is waited for, up to MAX_SETTLE_PERIODS settle periods in all.
 * @internal
 */
export async function settledReadBack(
  read: () => Promise<AppliedState>,
  revision: number,
  settleMs: number,
  signal: AbortSignal | undefined,
): Promise<AppliedState> {
  const started = performance.now();
  const cap = started + settleMs * MAX_SETTLE_PERIODS;
  let until = started + settleMs;
  let state = await read();
  while ((state.revision ?? 0) < revision && performance.now() < until) {
    await sleep(SETTLE_POLL_MS, signal);
    const before = state.revision ?? 0;
    state = await read();
    // A change landed: the service is still applying what was in flight, so it gets another period.
    if ((state.revision ?? 0) > before) until = Math.min(cap, performance.now() + settleMs);
  }
  return state;
}
