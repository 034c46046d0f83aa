// The Vercel AI SDK's `streamText` full stream (`TextStreamPart`s): `text-delta` parts carry the
// text; `error` and `abort` parts are how it reports a failure (its `textStream` just ends).
import { endedEarly, failureDetail, ModelStreamError } from './model-stream-error.js';
import { type Decoder, type ModelStopReason, type Piece, record, STEP, str } from './stream-pieces.js';

// The finish reasons (of the whole run, not one step) that end the text before the model was done.
const CUT_SHORT: Record<string, ModelStopReason> = { length: 'length', 'content-filter': 'content_filter' };
// The finish reasons of a run whose stream ended without the model's own finish (a connection
// closed early is `interrupted`; no reason at all is `unknown`): the answer was cut, not done.
const CUT_OFF = new Set(['interrupted', 'unknown', 'error']);

/** Part types of the AI SDK's full stream that tell it apart from other sources. @internal */
const AI_SDK_PARTS = new Set(
  `start start-step finish-step finish text-start text-delta text-end reasoning-start reasoning-delta
  reasoning-end tool-input-start tool-input-delta tool-input-end tool-call tool-result tool-error
  source file abort raw`.split(/\s+/),
);

/** True for a full-stream part of the AI SDK. @internal */
export function isAiSdkPart(event: Record<string, unknown>): boolean {
  return typeof event.type === 'string' && AI_SDK_PARTS.has(event.type);
}

/**
 * A decoder of full-stream parts. A tool call is announced once (by `tool-input-start`, or by
 * `tool-call` when the provider sends the call whole); the text of a step that follows a step
 * with text is set apart by a blank line, as a person would write two paragraphs. The run's
 * `finish` part closes the stream.
 * @internal
 */
export function aiSdkDecoder(): Decoder {
  const announced = new Set<string>();
  let finished = false;
  const announce = (fields: Record<string, unknown>, out: Piece[]) => {
    const id = str(fields.toolCallId) ?? str(fields.id);
    if (id !== undefined && announced.has(id)) return;
    if (id !== undefined) announced.add(id);
    out.push({ name: str(fields.toolName) ?? 'tool', ...(id ? { id } : {}), source: 'ai-sdk' });
  };
  const read = (event: unknown, out: Piece[]) => {
    const fields = record(event) ?? {};
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
      case 'tool-call':
        announce(fields, out);
        return;
      case 'finish': {
        if (CUT_OFF.has(String(fields.finishReason))) {
          throw endedEarly('ai-sdk', `the model's finish (finishReason '${fields.finishReason}')`);
        }
        finished = true;
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
  const end = () => {
    if (!finished) throw endedEarly('ai-sdk', "its 'finish' part");
  };
  return { read, end };
}
