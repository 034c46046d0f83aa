// The emulator page's dom.js, served at /_mock/ui/dom.js. Browser code is kept as a string
// so it ships inside the package with no build step; it must hold no backtick and no dollar-brace.

/** DOM building without innerHTML, and formatting. */
export const DOM_JS = `// Building DOM from text nodes and attributes only: user data is never parsed as markup.

/** An element with attributes, properties (keys starting with "."), listeners ("on...") and children. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name.startsWith('.')) el[name.slice(1)] = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/** Appends children: nodes as they are, strings and numbers as text, arrays flattened, nullish skipped. */
export function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replaces every child of "el". */
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** The element with this id (the page's fixed skeleton). */
export function byId(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error('missing element #' + id);
  return el;
}

/** 14:03:27 for an ISO timestamp. */
export function clockTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return date.toISOString().slice(11, 19);
}

/** 2026-05-01 14:03:27 UTC for a time in ms. */
export function fullTime(ms) {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ') + ' UTC';
}

/** 1.2 kB for a byte count. */
export function bytes(n) {
  if (n < 1000) return n + ' B';
  if (n < 1e6) return (n / 1e3).toFixed(1) + ' kB';
  return (n / 1e6).toFixed(1) + ' MB';
}

/** A duration in words: 45 s, 2 min, 1 h 5 min, 3 d 2 h. */
export function duration(seconds) {
  const s = Math.round(Math.abs(seconds));
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min' + (s % 60 ? ' ' + (s % 60) + ' s' : '');
  if (s < 86400) return Math.floor(s / 3600) + ' h' + (s % 3600 >= 60 ? ' ' + Math.floor((s % 3600) / 60) + ' min' : '');
  return Math.floor(s / 86400) + ' d' + (s % 86400 >= 3600 ? ' ' + Math.floor((s % 86400) / 3600) + ' h' : '');
}

/** Text cut to "max" characters with an ellipsis. */
export function clip(text, max) {
  const value = String(text || '');
  return value.length > max ? value.slice(0, max - 1) + '…' : value;
}
`;
