// The one error a model stream reports as data instead of throwing: an AI SDK `error` part, an
// OpenAI Responses `response.failed` or `error` event, an Anthropic `error` event.
import { AgentMessagingError } from '../core/errors.js';

/** Which kind of source a model stream was read as. */
export type ModelSourceKind = 'text' | 'openai-chat' | 'openai-responses' | 'ai-sdk' | 'anthropic';

/**
 * The model stream said it failed (a 401 before the first token, an overloaded model halfway). The
 * provider's own error, when it gave one, is the `cause`; the message names the source kind.
 *
 * @example
 * catch (error) { if (ModelStreamError.is(error)) console.error(error.source, error.cause); }
 */
export class ModelStreamError extends AgentMessagingError {
  static override readonly kind: string = 'ModelStreamError';
  /** The kind of stream that reported the failure. */
  readonly source: ModelSourceKind;

  constructor(source: ModelSourceKind, detail: string, cause?: unknown) {
    super(`The ${source} model stream failed: ${detail}`, cause === undefined ? undefined : { cause });
    this.source = source;
  }
}

/** The message of whatever a stream reported as its failure, without its payload. @internal */
export function failureDetail(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    const { message, code, type } = error as Record<string, unknown>;
    const text = [code ?? type, message].filter((part) => typeof part === 'string' && part !== '');
    if (text.length > 0) return text.join(': ');
  }
  return 'an error without a message';
}

/** The failure of a stream whose events ended before `finish`, the event that closes an answer. @internal */
export function endedEarly(source: ModelSourceKind, finish: string): ModelStreamError {
  return new ModelStreamError(source, `the stream ended before ${finish} (its connection was cut)`);
}
