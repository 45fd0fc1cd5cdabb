/** A tiny element builder: text children become text nodes (never HTML). */
export type Child = Node | string | number | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Readonly<Record<string, string | number | boolean | undefined>> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'style') e.setAttribute('style', String(v));
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === 'string' || typeof c === 'number' ? String(c) : c);
  }
  return e;
}

/** The element with `id`; throws when the page lacks it (a broken page should say so). */
export function byId(id: string): HTMLElement {
  const e = document.getElementById(id);
  if (e === null) throw new Error(`operator page: no #${id}`);
  return e;
}
