// The right column: webhook deliveries (event, attempt, status) and the /v1 request log, newest first,
// so a failing signature or a retried delivery shows at a glance; one tab each, with the arrow keys a
// tab list takes.
import type { Delivery, RequestLogEntry } from '../../../schemas/mock-control.js';
import { byId, clip, clockTime, h } from './dom.js';
import { store } from './store.js';

function deliveryRow({ type, attempt, status, error, at }: Delivery) {
  const ok = status !== null && status >= 200 && status < 300;
  return h(
    'tr',
    { 'data-event-type': type, 'data-attempt': attempt, 'data-status': status ?? 'none' },
    h('td.mono', clockTime(at)),
    h('td', h('span.event-type', type), error ? h('span.error-line', error) : null),
    h('td.num', `#${attempt}`),
    h('td.status', { class: ok ? 'ok' : 'failed', title: error || undefined }, status ?? 'no answer'),
  );
}

function requestRow({ method, path, query, headers, body }: RequestLogEntry) {
  const search = new URLSearchParams(query).toString();
  const target = path + (search ? `?${search}` : '');
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  const shown = `${method} ${target}\n${head.join('\n')}${body ? `\n\n${clip(body, 4000)}` : ''}`;
  return h(
    'li',
    { 'data-method': method, 'data-path': path },
    h(
      'details',
      h(
        'summary',
        h('span.method', { class: `method-${method.toLowerCase()}` }, method),
        h('span.mono.path', target),
      ),
      h('pre.request-body', shown),
    ),
  );
}

// Each entry's row is made once and kept, so a redraw moves the rows already drawn (any <details> a
// person opened stays open) and makes only the new ones; a row whose entry left the log goes with it.
const rows = new WeakMap<object, Element>();

function drawLog<T extends object>(name: string, entries: readonly T[], row: (entry: T) => Element) {
  const items = entries.map((entry) => {
    const item = rows.get(entry) ?? row(entry);
    rows.set(entry, item);
    return item;
  });
  // Newest first.
  byId(name).replaceChildren(...items.reverse());
  byId(`${name}-count`).textContent = String(entries.length);
  byId(`${name}-empty`).hidden = entries.length > 0;
}

/** Draws both logs. */
export function drawActivity() {
  drawLog('deliveries', store.deliveries, deliveryRow);
  drawLog('requests', store.requests, requestRow);
}

/** Shows a tab's panel and hides the other's; the shown tab is the one the arrow keys start from. */
export function showTab(shown: Element) {
  for (const tab of document.querySelectorAll<HTMLElement>('[role="tab"]')) {
    tab.setAttribute('aria-selected', String(tab === shown));
    tab.tabIndex = tab === shown ? 0 : -1;
    byId(tab.getAttribute('aria-controls') ?? '').hidden = tab !== shown;
  }
}

/** Makes the arrow keys switch tabs, as a tab list takes them (a click is the page's click listener). */
export function bindTabs() {
  document.querySelector<HTMLElement>('[role="tablist"]')?.addEventListener('keydown', (event) => {
    const other = document.querySelector<HTMLElement>('[role="tab"][aria-selected="false"]');
    if (!other || (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight')) return;
    showTab(other);
    other.focus();
  });
}
