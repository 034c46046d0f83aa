// What a model stream's events come down to: text for the reply, and tool calls that are progress.
import type { ModelSourceKind } from './model-stream-error.js';

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

/** A stop that leaves the text cut short. @internal */
export interface CutShort {
  cutShort: ModelStopReason;
}

/**
 * A new step of the model's answer began (after a tool call): its text, if any text came before it,
 * starts after a blank line. @internal
 */
export const STEP = { step: true } as const;

/** One thing an event says: a piece of text, a tool call, a new step, or that the text was cut short. @internal */
export type Piece = string | ToolCallInfo | CutShort | typeof STEP;

/**
 * Reads the events of one kind of stream. Each call of a factory keeps its own state.
 * @internal
 */
export interface Decoder {
  /** Turns one event into pieces, pushed onto `out`; throws a ModelStreamError for an event that reports a failure. */
  read(event: unknown, out: Piece[]): void;
  /**
   * Called once the events ended: throws a ModelStreamError when the stream ended without the event
   * that closes an answer, since a connection closed early ends an iterator without an error.
   */
  end(): void;
}

/** A record view of an unknown value, or undefined. @internal */
export function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

/** A string field, or undefined. @internal */
export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
