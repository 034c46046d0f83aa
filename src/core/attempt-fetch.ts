// One attempt as ky runs it: the `fetch` ky is given sends the request and reads the answer's body
// before it resolves. ky's per-attempt timer wraps this whole function, so `timeoutMs` covers the body
// as well as the headers, and a body that stalls or is cut is one failed attempt under the one retry
// policy (retry.ts), repeated with the same request (the same Idempotency-Key). No afterResponse hook:
// ky would clone (tee) the answer for it and run it through extra promises on every call.

import { ConnectionError, InvalidResponseError } from './errors.js';
import type { ConnectionOptions } from './options.js';
import { readCapped } from './response.js';

/** What one call's attempts need to know. @internal */
export interface AttemptPlan {
  /** The client's `fetch` option; without one, `globalThis.fetch` is looked up on every attempt (msw). */
  fetch: ConnectionOptions['fetch'];
  /**
   * A JSON body this function attaches to each attempt itself, so ky's Request carries none: ky clones
   * its Request before every attempt of a call that may repeat, and a body there would be a stream to
   * tee each time. Only with `globalThis.fetch`, which honours `init.body` as fetch does; a client's
   * own `fetch` gets the whole Request (a wrapper may read only that).
   */
  body: string | undefined;
  /** Read 2xx bodies too (JSON calls); raw and upload calls hand a 2xx answer over unread. */
  readsAnswer: boolean;
  /** Most bytes of one body, after decompression. */
  maxBytes: number;
  operation: string;
  /** The caller's signal: a body read it cut short is its abort, not a lost connection. */
  signal: AbortSignal | undefined;
  /** Called as each attempt is sent (its clock starts). */
  onSend: () => void;
  /**
   * Called once the attempt has its answer: `text` is the 2xx body read here (JSON calls), undefined
   * for an answer handed over unread or an error answer.
   */
  onAnswer: (response: Response, text: string | undefined) => void;
}

/** Statuses whose answer may not carry a body (the Response constructor refuses one). */
const NO_BODY = [101, 103, 204, 205, 304];

/**
 * The `fetch` for ky's `fetch` option, for one call. A 2xx body over `maxBytes` is the
 * InvalidResponseError (never retried); one cut mid-way is a ConnectionError (retried when the call may
 * repeat). An error body is read under the cap too and handed to ky as an in-memory copy; one over the
 * cap, cut or too slow is dropped: the status still makes the typed ApiError (and decides its retry),
 * only without the body's code and message.
 * @internal
 */
export function attemptFetch(
  plan: AttemptPlan,
): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    plan.onSend();
    const response = await (plan.body === undefined
      ? (plan.fetch ?? globalThis.fetch)(input, init)
      : globalThis.fetch(input, { ...init, body: plan.body }));
    if (response.ok) {
      if (!plan.readsAnswer) {
        plan.onAnswer(response, undefined);
        return response;
      }
      let text: string;
      try {
        text = await readCapped(response, plan.maxBytes, plan.operation);
      } catch (error) {
        // The caller's abort and an answer over the cap are final; ky maps the abort itself.
        if (InvalidResponseError.is(error) || plan.signal?.aborted) throw error;
        throw new ConnectionError(`${plan.operation}: the connection failed while the answer was read.`, {
          cause: error,
        });
      }
      plan.onAnswer(response, text);
      return response;
    }
    // An error body that fails to arrive whole is only decoration lost, as ky's own read treats it.
    const text = await readCapped(response, plan.maxBytes, plan.operation).catch(() => '');
    plan.onAnswer(response, undefined);
    const copy = new Response(NO_BODY.includes(response.status) ? null : text, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // What the error's caller may read stays the answer's own.
    Object.defineProperties(copy, {
      url: { value: response.url },
      redirected: { value: response.redirected },
    });
    return copy;
  };
}
