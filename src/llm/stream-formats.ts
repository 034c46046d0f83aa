// The model streams toTextStream reads, one format each: how its events are told apart, and what
// each event tells the reading (text, tool calls, a new answer, its end and stop reason). A failure
// the stream reports as data is thrown as a ModelStreamError.

import { endedEarly, type ModelSourceKind } from './model-stream-error.js';
import { type Reading, record, str } from './stream-pieces.js';

/** One kind of model stream. @internal */
export interface StreamFormat {
  readonly kind: Exclude<ModelSourceKind, 'text'>;
  /** The GenAI provider (`gen_ai.provider.name`); an AI SDK stream does not say which is behind it. */
  readonly provider?: string;
  /** The event that closes an answer: a stream that ends without it was cut (a connection closed early). */
  readonly finish: string;
  /** True for an event of this kind. */
  matches(event: Record<string, unknown>): boolean;
  /** Tells `reading` what one event says. */
  read(event: Record<string, unknown>, reading: Reading): void;
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
  read(chunk, reading) {
    reading.begin(chunk.id);
    // A compatible server may put its error in a chunk; the openai package throws it itself.
    if (chunk.error !== undefined && chunk.error !== null) reading.fail(chunk.error);
    // Only the first choice is the reply: `n > 1` asks for alternatives, not parts of one answer.
    const choice = record(Array.isArray(chunk.choices) ? chunk.choices[0] : undefined);
    const delta = record(choice?.delta) ?? {};
    for (const [position, call] of (Array.isArray(delta.tool_calls) ? delta.tool_calls : []).entries()) {
      const fields = record(call) ?? {};
      const name = str(record(fields.function)?.name);
      const index = typeof fields.index === 'number' ? fields.index : position;
      if (name !== undefined) reading.tool(name, str(fields.id), `${chunk.id}:${index}`);
    }
    reading.text(str(delta.content) ?? delta.refusal);
    if (typeof choice?.finish_reason === 'string') reading.finish(choice.finish_reason);
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
  read(fields, reading) {
    const response = record(fields.response);
    switch (fields.type) {
      case 'response.output_text.delta':
        return reading.text(fields.delta);
      case 'response.output_item.added': {
        const item = record(fields.item) ?? {};
        const type = str(item.type) ?? '';
        if (type.endsWith('_call')) reading.tool(str(item.name) ?? type, str(item.call_id) ?? str(item.id));
        return;
      }
      case 'response.completed':
        return reading.finish();
      // The text so far stands; the reason says what ended it (the output limit, or a filter).
      case 'response.incomplete': {
        const reason = record(response?.incomplete_details)?.reason;
        return reading.finish(reason === 'content_filter' ? reason : 'length');
      }
      case 'response.failed':
        return reading.fail(response?.error ?? 'response.failed');
      case 'error':
        return reading.fail(fields);
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
  read(fields, reading) {
    switch (fields.type) {
      case 'message_start':
        return reading.begin(fields.message);
      case 'message_stop':
        return reading.finish();
      case 'content_block_start': {
        const block = record(fields.content_block) ?? {};
        const type = str(block.type) ?? '';
        if (type.endsWith('tool_use')) reading.tool(str(block.name) ?? type, str(block.id));
        else if (type === 'text') reading.text(block.text);
        return;
      }
      case 'content_block_delta': {
        const delta = record(fields.delta) ?? {};
        if (delta.type === 'text_delta') reading.text(delta.text);
        return;
      }
      case 'message_delta':
        return reading.stop(record(fields.delta)?.stop_reason);
      case 'error':
        return reading.fail(fields.error ?? fields);
      default:
    }
  },
};

/** Part types of the AI SDK's full stream that tell it apart from other sources. */
const AI_SDK_PARTS = new Set(
  `start start-step finish-step finish text-start text-delta text-end reasoning-start reasoning-delta
  reasoning-end tool-input-start tool-input-delta tool-input-end tool-call tool-result tool-error
  source file abort raw`.split(/\s+/),
);

// The finish reasons of a run whose stream ended without the model's own finish (a connection
// closed early is `interrupted`; no reason at all is `unknown`): the answer was cut, not done.
const AI_SDK_CUT_OFF = new Set(['interrupted', 'unknown', 'error']);

/**
 * The Vercel AI SDK's `streamText` full stream (`TextStreamPart`s): `text-delta` parts carry the
 * text; `error` and `abort` parts are how it reports a failure (its `textStream` just ends). A tool
 * call is announced once (by `tool-input-start`, or by `tool-call` when the provider sends the call
 * whole); the text of a step that follows a tool call is set apart by a blank line. The run's
 * `finish` part (its finish reason is the whole run's, not one step's) closes the stream.
 */
const AI_SDK: StreamFormat = {
  kind: 'ai-sdk',
  finish: "its 'finish' part",
  matches: (event) => typeof event.type === 'string' && AI_SDK_PARTS.has(event.type),
  read(fields, reading) {
    switch (fields.type) {
      // `text` in AI SDK 5 and later; `textDelta` and `delta` in earlier releases.
      case 'text-delta':
        return reading.text(str(fields.text) ?? str(fields.textDelta) ?? fields.delta);
      case 'tool-input-start':
      case 'tool-call':
        return reading.tool(str(fields.toolName) ?? 'tool', str(fields.toolCallId) ?? str(fields.id));
      case 'finish':
        if (AI_SDK_CUT_OFF.has(String(fields.finishReason))) {
          throw endedEarly('ai-sdk', `the model's finish (finishReason '${fields.finishReason}')`);
        }
        return reading.finish(fields.finishReason);
      case 'error':
        return reading.fail(fields.error);
      case 'abort':
        return reading.fail(undefined, `aborted${str(fields.reason) ? `: ${fields.reason}` : ''}`);
      default:
    }
  },
};

/** Every format, in the order an event is tried against them. @internal */
export const STREAM_FORMATS: readonly StreamFormat[] = [OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC, AI_SDK];
