// What a model stream's events come down to: text for the reply, tool calls that are progress, and
// how the answer ended. A format (stream-formats.ts) tells its reading what each event says.
import { failureDetail, type ModelSourceKind, ModelStreamError } from './model-stream-error.js';

/** A tool call the model started: shown as progress, never as reply text. */
export interface ToolCallInfo {
  /** The tool's name (for a provider's built-in tool, its item type, as `web_search_call`). */
  name: string;
  /** The call's id, when the stream gives one. */
  id?: string;
  /** The kind of stream it came from. */
  source: ModelSourceKind;
}

/**
 * Why a model stopped before its answer was done: it reached its output limit (`length`: OpenAI's
 * `finish_reason: 'length'`, Responses' `max_output_tokens`, Anthropic's `max_tokens`), or a filter
 * or refusal ended it (`content_filter`).
 */
export type ModelStopReason = 'length' | 'content_filter';

// The stop reasons that end the text before the model was done, in every format's words.
const CUT_SHORT: Record<string, ModelStopReason> = {
  length: 'length',
  max_tokens: 'length',
  max_output_tokens: 'length',
  model_context_window_exceeded: 'length',
  content_filter: 'content_filter',
  'content-filter': 'content_filter',
  refusal: 'content_filter',
};

/** One read of a model stream: what its events said so far. @internal */
export class Reading {
  /** Text and tool calls not yet handed on, in order. */
  readonly out: (string | ToolCallInfo)[] = [];
  /** The event that closes an answer came, and no new answer began since. */
  finished = false;
  /** A stop that cut the text short, if no text followed it. */
  cutShort: ModelStopReason | undefined;
  wroteText = false;
  #step = false; // a tool call came since the last text
  #answer: unknown;
  readonly #announced = new Set<unknown>();

  constructor(readonly kind: ModelSourceKind) {}

  text(text: unknown): void {
    if (typeof text !== 'string' || text === '') return;
    // The text of two steps is set apart by a blank line, as a person writes two paragraphs.
    if (this.#step && this.wroteText) this.out.push('\n\n');
    this.out.push(text);
    this.wroteText = true;
    this.#step = false;
    this.cutShort = undefined;
  }

  /** A tool call, announced once per `key` (its id by default); its arguments are never text. */
  tool(name: string, id: string | undefined, key: unknown = id): void {
    this.#step = true;
    if (key !== undefined && this.#announced.has(key)) return;
    this.#announced.add(key);
    this.out.push({ name, ...(id ? { id } : {}), source: this.kind });
  }

  /** A new answer (its id) began, when `id` is not the one being read: until it finishes, an end is a cut. */
  begin(id: unknown): void {
    if (id === this.#answer) return;
    this.#answer = id;
    this.finished = false;
  }

  /** The answer closed, with the model's stop reason. */
  finish(reason?: unknown): void {
    this.finished = true;
    this.stop(reason);
  }

  /** The model's stop reason, which may leave the text cut short. */
  stop(reason: unknown): void {
    this.cutShort = CUT_SHORT[String(reason)] ?? this.cutShort;
  }

  /** The failure the stream reported as data. */
  fail(error: unknown, detail = failureDetail(error)): never {
    throw new ModelStreamError(this.kind, detail, error);
  }
}

/** A record view of an unknown value, or undefined. @internal */
export function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

/** A string field, or undefined. @internal */
export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
