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
export class ApiPromise<T> extends Promise<T> {
  readonly #result: Promise<WithResponse<T>>;
  #data: Promise<T> | undefined;

  // `super` gets a settled placeholder: every read goes through `then`, which follows `#result`.
  constructor(result: Promise<WithResponse<T>>) {
    super((resolve) => resolve(undefined as T));
    this.#result = result;
  }

  // Derived promises (`.then` results) are plain promises, not ApiPromises.
  static override get [Symbol.species]() {
    return Promise;
  }

  /** The parsed object with the HTTP response and its request id. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#result;
  }

  #parsed(): Promise<T> {
    this.#data ??= this.#result.then((result) => result.data);
    return this.#data;
  }

  // biome-ignore lint/suspicious/noThenProperty: this is a Promise subclass; `then` follows the parsed result.
  override then<R1 = T, R2 = never>(
    onFulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#parsed().then(onFulfilled, onRejected);
  }

  override catch<R = never>(onRejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.#parsed().catch(onRejected);
  }

  override finally(onFinally?: (() => void) | null): Promise<T> {
    return this.#parsed().finally(onFinally);
  }
}
