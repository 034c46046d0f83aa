// The emulator page's activity.js, served at /_mock/ui/activity.js. Browser code is kept as a string
// so it ships inside the package with no build step; it must hold no backtick and no dollar-brace.

/** The right column: webhook deliveries and the request log. */
export const ACTIVITY_JS = String.raw`// The right column: webhook deliveries (event, attempt, status) and the /v1 request log, newest
// first, so a failing signature or a retried delivery shows at a glance.
import { byId, clip, clockTime, h } from './dom.js';
import { store } from './store.js';

function statusCell(delivery) {
  const ok = delivery.status !== null && delivery.status >= 200 && delivery.status < 300;
  return h('td', { class: 'status ' + (ok ? 'ok' : 'failed'), title: delivery.error || undefined },
    delivery.status === null ? 'no answer' : String(delivery.status));
}

function deliveryRow(delivery) {
  return h('tr', { 'data-event-type': delivery.type, 'data-attempt': delivery.attempt, 'data-status': delivery.status === null ? 'none' : delivery.status },
    h('td', { class: 'mono' }, clockTime(delivery.at)),
    h('td', {}, h('span', { class: 'event-type' }, delivery.type), delivery.error ? h('span', { class: 'error-line' }, delivery.error) : null),
    h('td', { class: 'num' }, '#' + delivery.attempt),
    statusCell(delivery),
  );
}

function requestRow(request) {
  const query = new URLSearchParams(request.query).toString();
  const target = request.path + (query ? '?' + query : '');
  const headers = Object.entries(request.headers).map(([name, value]) => name + ': ' + value).join('\n');
  return h('li', { 'data-method': request.method, 'data-path': request.path },
    h('details', {},
      h('summary', {},
        h('span', { class: 'method method-' + request.method.toLowerCase() }, request.method),
        h('span', { class: 'mono path' }, target),
      ),
      h('pre', { class: 'request-body' }, request.method + ' ' + target + '\n' + headers + (request.body ? '\n\n' + clip(request.body, 4000) : '')),
    ),
  );
}

// Logs only grow (and drop their oldest past a cap), so new rows are prepended and rows already
// drawn stay, with any <details> a person opened still open.
const drawn = new Map();

function drawLog(name, entries, row) {
  const list = byId(name);
  let state = drawn.get(name);
  if (!state || state.entries !== entries) {
    state = { entries, rows: new Map() };
    drawn.set(name, state);
    list.replaceChildren();
  }
  for (const entry of entries) {
    if (state.rows.has(entry)) continue;
    const item = row(entry);
    state.rows.set(entry, item);
    list.prepend(item);
  }
  const kept = new Set(entries);
  for (const [entry, item] of state.rows) {
    if (kept.has(entry)) continue;
    item.remove();
    state.rows.delete(entry);
  }
  byId(name + '-count').textContent = String(entries.length);
  byId(name + '-empty').hidden = entries.length > 0;
}

/** Draws what is new in both logs. */
export function drawActivity() {
  drawLog('deliveries', store.deliveries, deliveryRow);
  drawLog('requests', store.requests, requestRow);
}
`;
