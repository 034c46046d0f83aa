// A promise of the parsed wire object that can also hand over the HTTP response (openai-node's idea).

/** A result together with the answer it came from. */
export interface WithResponse<T> {
  /** The parsed wire object, unknown fields kept. */
  data: T;
  /** The HTTP response (status, headers); its body is what the SDK parsed into `data`. */
  response: Response;
  /** The `Request-Id` header, for support requests. */
  requestId: string | undefined;
}

/**
 * The promise every method returns: awaits to the parsed wire object; `withResponse()` gives the
 * response and request id as well. The request starts at once, whichever way it is read.
 *
 * @example
 * const { data, requestId } = await client.conversations.retrieve(cnv).withResponse();
 */
export interface ApiPromise<T> extends Promise<T> {
  /** The parsed object with the HTTP response and its request id. */
  withResponse(): Promise<WithResponse<T>>;
}

/** The ApiPromise of a call's result. @internal */
export function apiPromise<T>(result: Promise<WithResponse<T>>): ApiPromise<T> {
  const data = result.then((answer) => answer.data);
  const withResponse = () => {
    // Read this way, a failure reaches the caller through `result`: the data's copy of it is handled.
    data.catch(() => undefined);
    return result;
  };
  return Object.assign(data, { withResponse });
}
