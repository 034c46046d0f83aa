// The emulator page on the loopback door: GET / answers the page and GET /_mock/ui/<file> its
// assets; every other request goes on to the mock. The msw door never sees this module.
import { ACTIVITY_JS } from './assets/activity-js.js';
import { API_JS } from './assets/api-js.js';
import { APP_JS } from './assets/app-js.js';
import { CHAT_JS } from './assets/chat-js.js';
import { DOM_JS } from './assets/dom-js.js';
import { EMULATOR_CSS } from './assets/emulator-css.js';
import { EMULATOR_HTML } from './assets/index-html.js';
import { MESSAGE_JS } from './assets/message-js.js';
import { SIDEBAR_JS } from './assets/sidebar-js.js';
import { STORE_JS } from './assets/store-js.js';

type Fetch = (request: Request) => Promise<Response>;

const JS = 'text/javascript; charset=utf-8';

/** Every asset by path. */
export const EMULATOR_ASSETS: ReadonlyMap<string, { type: string; body: string }> = new Map([
  ['/', { type: 'text/html; charset=utf-8', body: EMULATOR_HTML }],
  ['/_mock/ui/emulator.css', { type: 'text/css; charset=utf-8', body: EMULATOR_CSS }],
  ['/_mock/ui/app.js', { type: JS, body: APP_JS }],
  ['/_mock/ui/api.js', { type: JS, body: API_JS }],
  ['/_mock/ui/store.js', { type: JS, body: STORE_JS }],
  ['/_mock/ui/dom.js', { type: JS, body: DOM_JS }],
  ['/_mock/ui/sidebar.js', { type: JS, body: SIDEBAR_JS }],
  ['/_mock/ui/chat.js', { type: JS, body: CHAT_JS }],
  ['/_mock/ui/message.js', { type: JS, body: MESSAGE_JS }],
  ['/_mock/ui/activity.js', { type: JS, body: ACTIVITY_JS }],
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

/** Wraps the mock's fetch so that it also serves the emulator page and its assets. */
export function withEmulatorPage(fetch: Fetch): Fetch {
  return async (request) => {
    const { pathname } = new URL(request.url);
    const asset = EMULATOR_ASSETS.get(pathname);
    if (!asset || (request.method !== 'GET' && request.method !== 'HEAD')) return fetch(request);
    return new Response(request.method === 'HEAD' ? null : asset.body, {
      status: 200,
      headers: {
        'content-type': asset.type,
        'cache-control': 'no-cache',
        'content-security-policy': CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      },
    });
  };
}
