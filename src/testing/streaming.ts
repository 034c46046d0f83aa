// The streaming send (PROTOCOL.md section 8): a message in `streaming` state whose answer is its
// live event log, fed by the NDJSON lines of the same request or by append/complete calls.
import { StreamBodyLine } from '../schemas/stream.js';
import { type LineReader, parseJson } from './body.js';
import { MockError } from './http.js';
import { newId } from './ids.js';
import { appendText, completeMessage, createMessage } from './message-store.js';
import type { RouteContext } from './router.js';
import type { BlockRecord, ConversationRecord, MessageRecord } from './state.js';
import type { MockWorld } from './world.js';

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  // Chunked framing makes a cut stream a broken body for the client, not a clean end of a
  // connection-delimited one (msw's interceptor and node:http both honour it).
  'transfer-encoding': 'chunked',
};

interface SendFields {
  fallbackText?: string;
  replyToMessageId?: string;
  metadata?: Record<string, unknown>;
}

/** Creates the streaming message and answers its event stream; replays follow the same message. */
export function startStreamingSend(
  ctx: RouteContext<SendFields>,
  conversation: ConversationRecord,
  blocks: BlockRecord[],
): Response {
  const { world } = ctx;
  // A reply always has a text block to append to.
  if (!blocks.some((block) => block.type === 'text'))
    blocks.push({ id: newId('blk'), type: 'text', text: '' });
  const message = createMessage(world, conversation, {
    sender_id: ctx.caller?.id ?? '',
    blocks,
    fallback_text: ctx.body.fallbackText || null,
    status: 'streaming',
    reply_to: ctx.body.replyToMessageId,
    metadata: ctx.body.metadata,
  });
  ctx.replayWith = (replay) => followMessage(replay, message);
  return followMessage(ctx, message);
}

/** An event stream of the message from now on; the request's NDJSON lines, if any, feed it. */
function followMessage(ctx: RouteContext, message: MessageRecord): Response {
  const { world, lines } = ctx;
  const control = { stopped: false };
  const stream = world.streams.open(message, {
    cutAfterEvents: ctx.fault?.fault === 'cut_stream' ? ctx.fault.after_events : undefined,
    keepAliveMs: world.options.keepAliveMs,
    signal: ctx.request.signal,
    // Cut or disconnected: lines not yet applied are never applied, and the message stays as it is.
    onStop: () => {
      control.stopped = true;
      lines?.cancel();
    },
  });
  if (lines) void applyLines(world, message, lines, control, stream.cut);
  return new Response(stream.body, { status: 200, headers: SSE_HEADERS });
}

async function applyLines(
  world: MockWorld,
  message: MessageRecord,
  lines: LineReader,
  control: { stopped: boolean },
  cut: () => void,
): Promise<void> {
  const generation = world.state.generation;
  try {
    for (;;) {
      const line = await lines.next();
      if (line === undefined || control.stopped || world.state.generation !== generation) return;
      // Once the message is complete, the rest of the body is read and ignored.
      if (line.trim() === '' || message.status !== 'streaming') continue;
      const parsed = parseJson(StreamBodyLine, line, 'line');
      if (parsed.type === 'message.patch')
        appendText(world, message, parsed.patch.blockId, parsed.patch.value);
      else completeMessage(world, message, parsed.fallbackText);
    }
  } catch (error) {
    // A bad line breaks the connection, so the writer notices and recovers through append;
    // a body that fails to read means the client went away, which leaves the message as it is.
    if (error instanceof MockError) cut();
  }
}
