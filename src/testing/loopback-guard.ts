// The loopback server answers on the developer's machine, where every web page the developer has
// open can send it requests. Two attacks matter: a cross-site "simple" request (a form POST, or a
// fetch with content-type text/plain, which the browser sends without asking the server first) that
// resets the mock or posts as its users; and DNS rebinding, where a page's own host name is pointed
// at 127.0.0.1 so that the page may read /_mock/state, session tokens included. So /_mock and the
// page answer only requests addressed to a loopback name, and /_mock writes only from the mock's own
// origin with a JSON body (which a browser sends cross-site only after a preflight the mock never
// grants). /v1 and the file URLs are the service's API and stay open, as a real service's are.
// The msw door and mock.fetch are in-process and never see this.
import { forbidden, type MockError, type MockRequest, mediaType } from './http.js';

/** Why the loopback door refuses a request (403: /_mock or the page from a caller that is not local), or undefined. */
export function loopbackRefusal(request: MockRequest): MockError | undefined {
  const { pathname } = request.url;
  const guarded = pathname === '/' || pathname === '/_mock' || pathname.startsWith('/_mock/');
  if (!guarded) return undefined;
  const host = loopbackHost(request.headers.get('host'));
  if (host === undefined) {
    return forbidden(
      `host: ${JSON.stringify(request.headers.get('host') ?? '')} is not a loopback name; /_mock and the ` +
        'emulator page answer only requests addressed to 127.0.0.1, localhost or [::1]',
    );
  }
  // A read changes nothing: only a write must come from the mock's own origin with JSON.
  if (['GET', 'HEAD'].includes(request.method.toUpperCase())) return undefined;
  const origin = request.headers.get('origin');
  if (origin !== null && !sameOrigin(origin, host)) {
    return forbidden(
      `origin: ${JSON.stringify(origin)} is not the mock's own (http://${host}); /_mock takes writes ` +
        'only from the emulator page and from programs that send no Origin',
    );
  }
  if (hasBody(request) && mediaType(request.headers.get('content-type')) !== 'application/json') {
    return forbidden(
      `content-type: ${JSON.stringify(request.headers.get('content-type') ?? '')} is not ` +
        'application/json; a /_mock write with a body must send JSON',
    );
  }
  return undefined;
}

// A loopback name and an optional port, nothing else (no user info: `evil@127.0.0.1` is not one).
const LOOPBACK_HOST = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/i;

/** The Host header as an origin writes it (lower case, no `:80`) when it is a loopback name. */
function loopbackHost(header: string | null): string | undefined {
  if (!header || !LOOPBACK_HOST.test(header)) return undefined;
  try {
    return new URL(`http://${header}`).host;
  } catch {
    return undefined; // a port above 65535
  }
}

/** True when `origin` is `http://` and this very host: the page the mock served, opened by that name. */
function sameOrigin(origin: string, host: string): boolean {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' && url.host === host && url.origin === origin.toLowerCase();
  } catch {
    // "null" (a sandboxed frame or a file) and anything else that is not a URL.
    return false;
  }
}

function hasBody(request: MockRequest): boolean {
  const length = request.headers.get('content-length');
  return request.headers.get('transfer-encoding') !== null || (length !== null && length.trim() !== '0');
}
