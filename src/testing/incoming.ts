// A request as the mock's pipeline reads it. mock.fetch and msw hand it a Fetch `Request`; the
// loopback door hands it the node:http request it already parsed, with the body read whole, so the
// common call never builds a `Request`, its `Headers` and its body stream. The rules that need the
// Fetch `Request` itself (a file upload, a stream that follows the client) get it from `request()`.

/** The headers of a request, read as Fetch `Headers` reads them. */
export interface HeaderReader {
  /** The value of a header (any case), duplicates joined with `, `; null when absent. */
  get(name: string): string | null;
  /** Every header in Fetch's order: lower-case names, sorted. */
  forEach(callback: (value: string, name: string) => void): void;
}

/** What the pipeline reads of a request. */
export interface Incoming {
  /** The method as sent (upper case on the loopback door). */
  readonly method: string;
  readonly url: URL;
  readonly headers: HeaderReader;
  /** The body, already read whole; undefined when the pipeline reads it from `request()`. */
  readonly bytes?: Uint8Array | undefined;
  /** The Fetch `Request`: the one given, or one built on first use. */
  request(): Request;
}

/** A Fetch `Request` as the pipeline reads it. */
export function fromRequest(request: Request): Incoming {
  return {
    method: request.method,
    url: new URL(request.url),
    headers: request.headers,
    request: () => request,
  };
}

/**
 * A node:http request's headers (`rawHeaders`: name, value, name, value...) read the way a Fetch
 * `Headers` built from them reads them: names in lower case and sorted, values without leading or
 * trailing whitespace, duplicates joined with `, ` (each `set-cookie` apart, as Fetch iterates them).
 */
export class RawHeaders implements HeaderReader {
  // Two arrays side by side, searched in order: a request has a handful of headers, fewer than it
  // takes for a Map (built and grown per request) to pay.
  readonly #names: string[] = [];
  readonly #values: string[] = [];
  readonly #cookies: string[] = [];

  constructor(raw: readonly string[]) {
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      const value = trimHttpWhitespace(raw[i + 1]!);
      if (name === 'set-cookie') this.#cookies.push(value);
      const at = this.#names.indexOf(name);
      if (at === -1) {
        this.#names.push(name);
        this.#values.push(value);
      } else {
        this.#values[at] = `${this.#values[at]}, ${value}`;
      }
    }
  }

  get(name: string): string | null {
    const at = this.#names.indexOf(name.toLowerCase());
    return at === -1 ? null : this.#values[at]!;
  }

  forEach(callback: (value: string, name: string) => void): void {
    for (const name of [...this.#names].sort()) {
      if (name === 'set-cookie') for (const cookie of this.#cookies) callback(cookie, name);
      else callback(this.#values[this.#names.indexOf(name)]!, name);
    }
  }
}

// Fetch strips these (tab, line feed, carriage return, space) from both ends of a header value;
// String.prototype.trim strips more (a no-break space, which a Latin-1 value may end with).
const HTTP_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

function trimHttpWhitespace(value: string): string {
  if (value === '') return value;
  const first = value.charCodeAt(0);
  const last = value.charCodeAt(value.length - 1);
  return first <= 32 || last <= 32 ? value.replace(HTTP_WHITESPACE, '') : value;
}
