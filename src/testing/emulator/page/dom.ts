// Building DOM from text nodes and attributes only: user data is never parsed as markup.

/** A child of h(): nodes as they are, strings and numbers as text, arrays flattened, nullish skipped. */
export type Child = Node | string | number | null | undefined | false | readonly Child[];

/** Attributes: `true` for a bare one; nullish and false leave it out. */
export type Attrs = Record<string, string | number | boolean | null | undefined>;

type Tag = keyof HTMLElementTagNameMap;
type TagOf<S> = S extends `${infer T extends Tag}.${string}` ? T : S extends Tag ? S : never;

/** `h('span.badge.badge-active', attrs?, ...children)`: an element, its classes, attributes and children. */
export function h<S extends Tag | `${Tag}.${string}`>(
  selector: S,
  attrs?: Attrs | Child,
  ...children: Child[]
): HTMLElementTagNameMap[TagOf<S>] {
  const [tag = 'div', ...classes] = selector.split('.');
  const el = document.createElement(tag);
  const plain =
    typeof attrs === 'object' && attrs !== null && !Array.isArray(attrs) && !(attrs instanceof Node);
  if (!plain) children.unshift(attrs as Child);
  const { class: extra, ...rest } = plain ? (attrs as Attrs) : {};
  const className = [...classes, extra].filter(Boolean).join(' ');
  if (className) el.className = className;
  for (const [name, value] of Object.entries(rest)) {
    if (value !== undefined && value !== null && value !== false)
      el.setAttribute(name, value === true ? '' : String(value));
  }
  return fill(el, ...children) as HTMLElementTagNameMap[TagOf<S>];
}

/** Children as nodes and text (never parsed as markup), arrays flattened, nullish and false skipped. */
const nodes = (children: readonly Child[]): (Node | string)[] =>
  children.flatMap((child) =>
    child === undefined || child === null || child === false
      ? []
      : Array.isArray(child)
        ? nodes(child)
        : [child instanceof Node ? child : String(child)],
  );

/** Replaces every child of `el`. */
export function fill<E extends Element>(el: E, ...children: Child[]): E {
  el.replaceChildren(...nodes(children));
  return el;
}

/** The element with this id (the page's fixed skeleton). */
export function byId<E extends HTMLElement = HTMLElement>(id: string): E {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing element #${id}`);
  return el as E;
}

/** Fills select `id` with one option per item, keeping the chosen one; `none` (disabled) when empty. */
export function choices<T extends { id: string }>(
  id: string,
  items: readonly T[],
  label: (item: T) => string,
  none: string,
) {
  const select = byId<HTMLSelectElement>(id);
  const keep = select.value;
  const options = items.map((item) => h('option', { value: item.id }, label(item)));
  fill(select, items.length === 0 ? h('option', { value: '' }, none) : options);
  if (items.some((item) => item.id === keep)) select.value = keep;
  select.disabled = items.length === 0;
}

/** 14:03:27 for an ISO timestamp or a time in ms; '' for none. */
export function clockTime(time: string | number | null | undefined): string {
  const date = new Date(time ?? '');
  return Number.isNaN(date.getTime()) ? '' : date.toISOString().slice(11, 19);
}

/** 2026-05-01 14:03:27 UTC for a time in ms. */
export const fullTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;

/** 1.2 kB for a byte count. */
export function bytes(n: number): string {
  if (n < 1000) return `${n} B`;
  return n < 1e6 ? `${(n / 1e3).toFixed(1)} kB` : `${(n / 1e6).toFixed(1)} MB`;
}

/** A duration in words: 45 s, 2 min 5 s, 1 h 5 min, 3 d 2 h. */
export function duration(seconds: number): string {
  const s = Math.round(Math.abs(seconds));
  const two = (big: number, bigName: string, small: number, smallName: string) => {
    const rest = Math.floor((s % big) / small);
    return `${Math.floor(s / big)} ${bigName}${rest ? ` ${rest} ${smallName}` : ''}`;
  };
  if (s < 60) return `${s} s`;
  if (s < 3600) return two(60, 'min', 1, 's');
  return s < 86400 ? two(3600, 'h', 60, 'min') : two(86400, 'd', 3600, 'h');
}

/** Text cut to `max` characters with an ellipsis. */
export function clip(text: string | null | undefined, max: number): string {
  const value = text ?? '';
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}
