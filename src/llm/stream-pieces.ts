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

/** Whether the model's answer is finished: a stream may hold several answers (a tool runner's). @internal */
export interface Finished {
  finished: boolean;
}

/** The event that closes an answer came. @internal */
export const FINISHED: Finished = { finished: true };

/** A new answer began: until it is finished, a stream that ends was cut. @internal */
export const STARTED: Finished = { finished: false };

/**
 * One thing an event says: a piece of text, a tool call, a new step, that the text was cut short,
 * or whether the answer is finished. @internal
 */
export type Piece = string | ToolCallInfo | CutShort | typeof STEP | Finished;

/** A record view of an unknown value, or undefined. @internal */
export function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

/** A string field, or undefined. @internal */
export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
