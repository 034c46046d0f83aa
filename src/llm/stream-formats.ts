// The model streams toTextStream reads, one format each: how its events are told apart, and how
// they come down to pieces (text, tool calls, steps, a stop that cut the text short, and whether
// the answer was finished). A failure the stream reports as data is thrown as a ModelStreamError.

import { endedEarly, failureDetail, type ModelSourceKind, ModelStreamError } from './model-stream-error.js';
import { FINISHED, type ModelStopReason, type Piece, record, STARTED, STEP, str } from './stream-pieces.js';

/** One kind of model stream. @internal */
export interface StreamFormat {
  readonly kind: Exclude<ModelSourceKind, 'text'>;
  /** The GenAI provider (`gen_ai.provider.name`); an AI SDK stream does not say which is behind it. */
  readonly provider?: string;
  /** The event that closes an answer: a stream that ends without it was cut (a connection closed early). */
  readonly finish: string;
  /** True for an event of this kind. */
  matches(event: Record<string, unknown>): boolean;
  /** A reader of one stream, with its own state: pushes the pieces of each event onto `out`. */
  reader(): (event: Record<string, unknown>, out: Piece[]) => void;
}

/**
 * OpenAI chat-completions streams (`ChatCompletionChunk`s, from `openai.chat.completions.create({
 * stream: true })` or any compatible server): `choices[0].delta.content` is the text. Tool-call deltas
 * carry the call's name once, in the delta of its `index`, then only argument fragments: the name
 * announces the call, the fragments are dropped. A tool runner (`runTools`) streams several
 * completions one after the other: a new chunk `id` starts a new one, whose text after a tool call
 * starts after a blank line. A completion ends with a `finish_reason`.
 */
const OPENAI_CHAT: StreamFormat = {
  kind: 'openai-chat',
  provider: 'openai',
  finish: 'a finish_reason',
  matches: (event) =>
    event.object === 'chat.completion.chunk' || (Array.isArray(event.choices) && !('type' in event)),
  reader() {
    const CUT_SHORT: Record<string, ModelStopReason> = { length: 'length', content_filter: 'content_filter' };
    const announced = new Set<number>();
    let completion: unknown;
    return (chunk, out) => {
      if (chunk.id !== completion) {
        completion = chunk.id;
        announced.clear();
        out.push(STARTED);
      }
      // A compatible server may put its error in a chunk; the openai package throws it itself.
      if (chunk.error !== undefined && chunk.error !== null) {
        throw new ModelStreamError('openai-chat', failureDetail(chunk.error), chunk.error);
      }
      const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
      // Only the first choice is the reply: `n > 1` asks for alternatives, not parts of one answer.
      const choice = record(choices[0]);
      if (typeof choice?.finish_reason === 'string') out.push(FINISHED);
      const cut = CUT_SHORT[String(choice?.finish_reason)];
      if (cut) out.push({ cutShort: cut });
      const delta = record(choice?.delta);
      if (!delta) return;
      for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        const fields = record(call) ?? {};
        const index = typeof fields.index === 'number' ? fields.index : announced.size;
        const name = str(record(fields.function)?.name);
        if (name === undefined || announced.has(index)) continue;
        announced.add(index);
        const id = str(fields.id);
        out.push(STEP, { name, ...(id === undefined ? {} : { id }), source: 'openai-chat' });
      }
      const content = str(delta.content) ?? str(delta.refusal);
      if (content) out.push(content);
    };
  },
};

/**
 * OpenAI Responses API streams (`openai.responses.create({ stream: true })`): typed events, of which
 * `response.output_text.delta` carries the text. An output item that calls a tool (`function_call`, or
 * a built-in tool's `*_call`) is a tool call; text of a later message item is set apart by a blank
 * line. `response.failed` and `error` are failures; `response.incomplete` cuts the text short.
 */
const OPENAI_RESPONSES: StreamFormat = {
  kind: 'openai-responses',
  provider: 'openai',
  finish: 'response.completed',
  matches: (event) => typeof event.type === 'string' && event.type.startsWith('response.'),
  reader: () => (fields, out) => {
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
        out.push(FINISHED);
        return;
      case 'response.incomplete': {
        // The text so far stands; the reason says what ended it (the output limit, or a filter).
        const reason = record(record(fields.response)?.incomplete_details)?.reason;
        out.push(FINISHED, { cutShort: reason === 'content_filter' ? 'content_filter' : 'length' });
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
  },
};

/**
 * Anthropic Messages streams: the raw events of `anthropic.messages.create({ stream: true })`, which a
 * `MessageStream` (`anthropic.messages.stream()`) also yields: `content_block_delta` events whose
 * `delta` is a `text_delta` carry the text. A `tool_use` block (or a server tool's
 * `server_tool_use`, `mcp_tool_use`) is a tool call and its `input_json_delta`s are dropped; text
 * after a tool call is set apart by a blank line. Adjacent text blocks (citations split text into
 * several) join as they are. Each message ends with `message_stop`.
 */
const ANTHROPIC: StreamFormat = {
  kind: 'anthropic',
  provider: 'anthropic',
  finish: 'message_stop',
  // message_start, _delta, _stop; content_block_start, _delta, _stop.
  matches: (event) => typeof event.type === 'string' && /^(message|content_block)_/.test(event.type),
  reader() {
    // The stop reasons that end the text before the model was done.
    const CUT_SHORT: Record<string, ModelStopReason> = {
      max_tokens: 'length',
      model_context_window_exceeded: 'length',
      refusal: 'content_filter',
    };
    return (fields, out) => {
      switch (fields.type) {
        case 'message_start':
          out.push(STARTED);
          return;
        case 'message_stop':
          out.push(FINISHED);
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
  },
};

/** Part types of the AI SDK's full stream that tell it apart from other sources. */
const AI_SDK_PARTS = new Set(
  `start start-step finish-step finish text-start text-delta text-end reasoning-start reasoning-delta
  reasoning-end tool-input-start tool-input-delta tool-input-end tool-call tool-result tool-error
  source file abort raw`.split(/\s+/),
);

/**
 * The Vercel AI SDK's `streamText` full stream (`TextStreamPart`s): `text-delta` parts carry the
 * text; `error` and `abort` parts are how it reports a failure (its `textStream` just ends). A tool
 * call is announced once (by `tool-input-start`, or by `tool-call` when the provider sends the call
 * whole); the text of a step that follows a step with text is set apart by a blank line. The run's
 * `finish` part closes the stream.
 */
const AI_SDK: StreamFormat = {
  kind: 'ai-sdk',
  finish: "its 'finish' part",
  matches: (event) => typeof event.type === 'string' && AI_SDK_PARTS.has(event.type),
  reader() {
    // The finish reasons (of the whole run, not one step) that end the text before the model was done.
    const CUT_SHORT: Record<string, ModelStopReason> = {
      length: 'length',
      'content-filter': 'content_filter',
    };
    // The finish reasons of a run whose stream ended without the model's own finish (a connection
    // closed early is `interrupted`; no reason at all is `unknown`): the answer was cut, not done.
    const CUT_OFF = new Set(['interrupted', 'unknown', 'error']);
    const announced = new Set<string>();
    return (fields, out) => {
      switch (fields.type) {
        case 'text-delta': {
          // `text` in AI SDK 5 and later; `textDelta` and `delta` in earlier releases.
          const text = str(fields.text) ?? str(fields.textDelta) ?? str(fields.delta);
          if (text) out.push(text);
          return;
        }
        case 'start-step':
          out.push(STEP);
          return;
        case 'tool-input-start':
        case 'tool-call': {
          const id = str(fields.toolCallId) ?? str(fields.id);
          if (id !== undefined && announced.has(id)) return;
          if (id !== undefined) announced.add(id);
          out.push({ name: str(fields.toolName) ?? 'tool', ...(id ? { id } : {}), source: 'ai-sdk' });
          return;
        }
        case 'finish': {
          if (CUT_OFF.has(String(fields.finishReason))) {
            throw endedEarly('ai-sdk', `the model's finish (finishReason '${fields.finishReason}')`);
          }
          out.push(FINISHED);
          const cut = CUT_SHORT[String(fields.finishReason)];
          if (cut) out.push({ cutShort: cut });
          return;
        }
        case 'error':
          throw new ModelStreamError('ai-sdk', failureDetail(fields.error), fields.error);
        case 'abort':
          throw new ModelStreamError('ai-sdk', `aborted${str(fields.reason) ? `: ${fields.reason}` : ''}`);
        default:
      }
    };
  },
};

/** Every format, in the order an event is tried against them. @internal */
export const STREAM_FORMATS: readonly StreamFormat[] = [OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC, AI_SDK];
