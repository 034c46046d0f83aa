// The emulator page on the loopback door: GET / answers the page and GET /_mock/ui/<file> its
// assets; every other request goes on to the mock. The msw door never sees this module.
import type { MockRequest } from '../http.js';
import { type PageAssets, pageAssets } from './page-assets.js';

/** Every asset by path: its content type and which of the page's files it is. */
const ROUTES: ReadonlyMap<string, { type: string; file: keyof PageAssets }> = new Map([
  ['/', { type: 'text/html; charset=utf-8', file: 'html' }],
  ['/_mock/ui/emulator.css', { type: 'text/css; charset=utf-8', file: 'css' }],
  ['/_mock/ui/app.js', { type: 'text/javascript; charset=utf-8', file: 'js' }],
]);

// The page loads only its own files and talks only to its own origin; it has no inline script,
// so even a text that slipped into markup could not run.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The page or one of its files, for a GET or HEAD of their paths; undefined for any other request. */
export function emulatorPage(request: MockRequest): Promise<Response> | undefined {
  const route = ROUTES.get(request.url.pathname);
  if (!route || (request.method !== 'GET' && request.method !== 'HEAD')) return undefined;
  const headers = {
    'content-type': route.type,
    'cache-control': 'no-cache',
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
  const body = (assets: PageAssets) => (request.method === 'HEAD' ? null : assets[route.file]);
  return pageAssets().then((assets) => new Response(body(assets), { headers }));
}
