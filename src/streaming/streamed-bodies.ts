// Whether this runtime's fetch can send a streamed request body, detected once.

let detected: boolean | undefined;

/**
 * True when `fetch` here can upload a `ReadableStream` body while the answer streams back. A runtime
 * without it ignores `duplex` and turns the stream into a string body with a content-type, which is
 * what the check looks for (the feature test Chrome's authors recommend).
 */
export function supportsStreamedBodies(): boolean {
  detected ??= detect();
  return detected;
}

function detect(): boolean {
  // Bun and Deno send a ReadableStream body while the answer streams back, but never read `duplex`,
  // so the feature test below would miss them.
  const runtime = globalThis as { Bun?: unknown; Deno?: unknown };
  if (runtime.Bun !== undefined || runtime.Deno !== undefined) return true;
  try {
    let duplexRead = false;
    const init = {
      method: 'POST',
      body: new ReadableStream(),
      get duplex() {
        duplexRead = true;
        return 'half';
      },
    };
    const request = new Request('http://feature.test/', init as RequestInit);
    return duplexRead && !request.headers.has('content-type');
  } catch {
    return false;
  }
}
