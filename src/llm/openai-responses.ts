// OpenAI Responses API streams (`openai.responses.create({ stream: true })`): typed events, of
// which `response.output_text.delta` carries the text.
import { endedEarly, failureDetail, ModelStreamError } from './model-stream-error.js';
import { type Decoder, type Piece, record, STEP, str } from './stream-pieces.js';

/** True for a Responses API event. @internal */
export function isResponsesEvent(event: Record<string, unknown>): boolean {
  return typeof event.type === 'string' && event.type.startsWith('response.');
}

/**
 * A decoder of Responses events. An output item that calls a tool (`function_call`, or a built-in
 * tool's `*_call`) is a tool call; text of a later message item is set apart by a blank line.
 * `response.failed` and `error` are failures; `response.incomplete` cuts the text short. A stream
 * that ends before `response.completed` or `response.incomplete` was cut.
 * @internal
 */
export function responsesDecoder(): Decoder {
  let finished = false;
  const read = (event: unknown, out: Piece[]) => {
    const fields = record(event) ?? {};
    switch (fields.type) {
      case 'response.output_text.delta': {
        const delta = str(fields.delta);
        if (delta) out.push(delta);
        return;
      }
      case 'response.output_item.added': {
        const item = record(fields.item) ?? {};
        const type = str(item.type) ?? '';
        if (!type.endsWith('_call')) return;
        const id = str(item.call_id) ?? str(item.id);
        out.push(STEP, { name: str(item.name) ?? type, ...(id ? { id } : {}), source: 'openai-responses' });
        return;
      }
      case 'response.completed':
        finished = true;
        return;
      case 'response.incomplete': {
        finished = true;
        // The text so far stands; the reason says what ended it (the output limit, or a filter).
        const reason = record(record(fields.response)?.incomplete_details)?.reason;
        out.push({ cutShort: reason === 'content_filter' ? 'content_filter' : 'length' });
        return;
      }
      case 'response.failed': {
        const error = record(fields.response)?.error;
        throw new ModelStreamError('openai-responses', failureDetail(error ?? 'response.failed'), error);
      }
      case 'error':
        throw new ModelStreamError('openai-responses', failureDetail(fields), fields);
      default:
    }
  };
  const end = () => {
    if (!finished) throw endedEarly('openai-responses', 'response.completed');
  };
  return { read, end };
}
