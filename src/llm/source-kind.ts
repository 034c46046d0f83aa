// Which kind of model stream a source is, told by its first event that says so.
import { ValidationError } from '../core/errors.js';
import { annotateActive } from '../telemetry.js';
import { aiSdkDecoder, isAiSdkPart } from './ai-sdk-parts.js';
import { anthropicDecoder, isAnthropicEvent } from './anthropic-events.js';
import { failureDetail, type ModelSourceKind, ModelStreamError } from './model-stream-error.js';
import { chatDecoder, isChatChunk } from './openai-chat.js';
import { isResponsesEvent, responsesDecoder } from './openai-responses.js';
import { type Decoder, record } from './stream-pieces.js';
import { EXPECTED_SOURCES } from './text-source.js';

/** A decoder for the kind an event shows, or undefined for an event every kind may send (a ping). @internal */
export function decoderFor(
  event: unknown,
  index: number,
): { kind: ModelSourceKind; decode: Decoder } | undefined {
  const chosen = chooseDecoder(event, index);
  // The reply's span learns which model system answers (GenAI semantic conventions, where known).
  if (chosen) annotateActive({ 'gen_ai.provider.name': PROVIDERS[chosen.kind], 'reply.source': chosen.kind });
  return chosen;
}

/** The GenAI provider of each kind; an AI SDK stream does not say which provider is behind it. */
const PROVIDERS: Record<ModelSourceKind, string | undefined> = {
  'openai-chat': 'openai',
  'openai-responses': 'openai',
  anthropic: 'anthropic',
  'ai-sdk': undefined,
  text: undefined,
};

function chooseDecoder(
  event: unknown,
  index: number,
): { kind: ModelSourceKind; decode: Decoder } | undefined {
  const fields = record(event);
  if (fields === undefined) {
    const message = `yielded ${describe(event)} at index ${index}; expected ${EXPECTED_SOURCES}`;
    throw new ValidationError([{ field: 'source', message }], 'toTextStream');
  }
  if (isChatChunk(fields)) return { kind: 'openai-chat', decode: chatDecoder() };
  if (isResponsesEvent(fields)) return { kind: 'openai-responses', decode: responsesDecoder() };
  if (isAnthropicEvent(fields)) return { kind: 'anthropic', decode: anthropicDecoder() };
  if (isAiSdkPart(fields)) return { kind: 'ai-sdk', decode: aiSdkDecoder() };
  if (fields.type === 'ping') return undefined;
  // Every kind reports a failure as `{ type: 'error', ... }`: a failure whatever the kind.
  if (fields.type === 'error') {
    const error = fields.error ?? fields;
    throw new ModelStreamError(guessKind(fields), failureDetail(error), error);
  }
  const message = `yielded ${describe(event)} at index ${index}; expected ${EXPECTED_SOURCES}`;
  throw new ValidationError([{ field: 'source', message }], 'toTextStream');
}

function guessKind(fields: Record<string, unknown>): ModelSourceKind {
  if ('sequence_number' in fields) return 'openai-responses';
  if (typeof record(fields.error)?.type === 'string') return 'anthropic';
  return 'ai-sdk';
}

/** A short, content-free description of a value, for an error message (no user text in errors). @internal */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  // A response body's bytes, say `toTextStreamResponse().body`: text, but not yet decoded.
  if (ArrayBuffer.isView(value)) return 'bytes (decode them, e.g. with TextDecoderStream)';
  if (typeof value !== 'object') return `a ${typeof value}`;
  const type = (value as Record<string, unknown>).type;
  if (typeof type === 'string') return `an object of type '${type.slice(0, 40)}'`;
  const keys = Object.keys(value).slice(0, 5);
  return keys.length === 0 ? 'an empty object' : `an object with keys ${keys.join(', ')}`;
}
