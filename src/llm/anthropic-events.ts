// Anthropic Messages streams: the raw events of `anthropic.messages.create({ stream: true })`, which
// a `MessageStream` (`anthropic.messages.stream()`) also yields: `content_block_delta` events whose
// `delta` is a `text_delta` carry the text.
import { endedEarly, failureDetail, ModelStreamError } from './model-stream-error.js';
import { type Decoder, type ModelStopReason, type Piece, record, STEP, str } from './stream-pieces.js';

// The stop reasons that end the text before the model was done.
const CUT_SHORT: Record<string, ModelStopReason> = {
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  refusal: 'content_filter',
};

const ANTHROPIC_EVENTS = new Set(
  `message_start message_delta message_stop
  content_block_start content_block_delta content_block_stop`.split(/\s+/),
);

/** True for an Anthropic stream event. @internal */
export function isAnthropicEvent(event: Record<string, unknown>): boolean {
  return typeof event.type === 'string' && ANTHROPIC_EVENTS.has(event.type);
}

/**
 * A decoder of Anthropic events. A `tool_use` block (or a server tool's `server_tool_use`,
 * `mcp_tool_use`) is a tool call and its `input_json_delta`s are dropped; text after a tool call
 * is set apart by a blank line. Adjacent text blocks (citations split text into several) join as
 * they are. Each message ends with `message_stop`: a stream whose last message has none was cut.
 * @internal
 */
export function anthropicDecoder(): Decoder {
  let stopped = false;
  const read = (event: unknown, out: Piece[]) => {
    const fields = record(event) ?? {};
    switch (fields.type) {
      case 'message_start':
        stopped = false;
        return;
      case 'message_stop':
        stopped = true;
        return;
      case 'content_block_start': {
        const block = record(fields.content_block) ?? {};
        const type = str(block.type) ?? '';
        if (type.endsWith('tool_use')) {
          const id = str(block.id);
          out.push(STEP, { name: str(block.name) ?? type, ...(id ? { id } : {}), source: 'anthropic' });
        } else if (type === 'text' && str(block.text)) {
          out.push(block.text as string);
        }
        return;
      }
      case 'content_block_delta': {
        const delta = record(fields.delta) ?? {};
        if (delta.type === 'text_delta' && str(delta.text)) out.push(delta.text as string);
        return;
      }
      case 'message_delta': {
        const cut = CUT_SHORT[String(record(fields.delta)?.stop_reason)];
        if (cut) out.push({ cutShort: cut });
        return;
      }
      case 'error': {
        const error = fields.error ?? fields;
        throw new ModelStreamError('anthropic', failureDetail(error), error);
      }
      default:
    }
  };
  const end = () => {
    if (!stopped) throw endedEarly('anthropic', 'message_stop');
  };
  return { read, end };
}
