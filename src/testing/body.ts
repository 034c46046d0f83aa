// Request bodies: JSON checked against the strict request schemas (400 naming the field), and the
// NDJSON body of a streaming send read line by line while the answer streams back.
import type * as z from 'zod/mini';
import { describeIssues, safeParse } from '../schemas/issues.js';
import { invalid, MAX_BODY_BYTES, MockError, type RequestBody } from './http.js';

/** Checks a decoded JSON value against a strict schema; 400 `invalid_request` naming each bad field. */
export function checkJson<S extends z.ZodMiniType>(schema: S, value: unknown, root = 'body'): z.output<S> {
  const parsed = safeParse(schema, value);
  if (!parsed.success) throw invalid(describeIssues(parsed.error, root));
  return parsed.data;
}

/** JSON text to a value; an empty body reads as `{}` so a missing body names the missing fields. */
export function decodeJson(text: string, root = 'body'): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Only a body that failed to parse is looked at again: JSON is never blank.
    if (text.trim() === '') return {};
    throw invalid(`${root}: is not valid JSON`);
  }
}

/** The most of a body the request log keeps, in characters; a longer one is cut there, with a mark. */
export const LOGGED_BODY_CHARS = 64 * 1024;

/**
 * A body's text as the request log keeps it: whole up to LOGGED_BODY_CHARS, else its start and a mark
 * saying how large it was (`bytes`, read whole unless `over`; unknown for a stream still coming in).
 */
export function loggedBody(text: string, bytes?: number, over = false): string {
  if (text.length <= LOGGED_BODY_CHARS) return text;
  const size =
    bytes === undefined
      ? 'a longer body'
      : `a ${over ? 'more than ' : ''}${over ? bytes - 1 : bytes}-byte body`;
  return `${text.slice(0, LOGGED_BODY_CHARS)}… [request log: the first ${LOGGED_BODY_CHARS} characters of ${size}]`;
}

/** True when the request body is NDJSON (the streamed input of PROTOCOL.md section 8). */
export function isNdjson(headers: Headers): boolean {
  return /^application\/x-ndjson\b/i.test(headers.get('content-type') ?? '');
}

/**
 * Reads a streamed body one line at a time, as it arrives. `onText` sees every chunk of raw text
 * as soon as it is read, so the request log fills in while the request is still open.
 */
export class LineReader {
  readonly #reader: ReadableStreamDefaultReader<string> | undefined;
  readonly #onText: (text: string) => void;
  #buffer = '';
  #ended = false;

  constructor(body: RequestBody, onText: (text: string) => void) {
    this.#reader = new Response(body as BodyInit | null).body
      ?.pipeThrough(new TextDecoderStream())
      .getReader();
    this.#onText = onText;
  }

  /** The next line without its `\n`; the last line may lack one; undefined at the end. */
  async next(): Promise<string | undefined> {
    for (;;) {
      const newline = this.#buffer.indexOf('\n');
      if (newline >= 0) {
        const line = this.#buffer.slice(0, newline).replace(/\r$/, '');
        this.#buffer = this.#buffer.slice(newline + 1);
        return line;
      }
      if (this.#ended || !this.#reader) {
        const rest = this.#buffer;
        this.#buffer = '';
        return rest === '' ? undefined : rest;
      }
      if (this.#buffer.length > MAX_BODY_BYTES) {
        throw new MockError(413, 'payload_too_large', `body: a line is longer than ${MAX_BODY_BYTES} bytes`);
      }
      const { done, value } = await this.#reader.read();
      if (done) this.#ended = true;
      else {
        this.#buffer += value;
        this.#onText(value);
      }
    }
  }

  /** Stops reading; lines not yet read are never applied. */
  cancel(): void {
    this.#ended = true;
    this.#buffer = '';
    this.#reader?.cancel().catch(() => undefined);
  }
}
