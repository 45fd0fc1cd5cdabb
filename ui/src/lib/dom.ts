/** A tiny element builder for the DOM glue modules: h('div', { class: 'x' }, child, 'text'). */

export type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | boolean | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c);
  }
  return el;
}

/** A <select> with the given options and value. */
export function select(options: readonly (string | readonly [value: string, label: string])[], value: string, attrs: Record<string, string> = {}): HTMLSelectElement {
  const s = h('select', attrs);
  for (const o of options) {
    const [v, l] = typeof o === 'string' ? [o, o] : o;
    s.append(h('option', { value: v }, l));
  }
  s.value = value;
  return s;
}
