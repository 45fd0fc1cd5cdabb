/**
 * Autocomplete for a text input: as the user types (debounced), `source(prefix, signal)`
 * is asked for suggestions and they are listed under the input; arrow keys move, Enter or
 * a click picks, Escape closes. A newer keystroke cancels the older lookup (LatestRequest),
 * so a slow answer never replaces a newer list.
 */
import { h } from './dom.js';
import { isAbort, LatestRequest } from './latest-request.js';

export type SuggestSource = (prefix: string, signal: AbortSignal) => Promise<string[]>;

export interface AutocompleteOptions {
  readonly source: SuggestSource;
  /** Called after a suggestion was put into the input. */
  readonly onPick: (value: string) => void;
  readonly debounceMs?: number;
}

/** Wraps `input` in a positioned span with the suggestion list; returns the wrapper. */
export function attachAutocomplete(input: HTMLInputElement, opts: AutocompleteOptions): HTMLElement {
  const list = h('ul', { class: 'ac-list', role: 'listbox', hidden: true });
  const wrap = h('span', { class: 'ac' }, input, list);
  input.setAttribute('autocomplete', 'off');
  input.setAttribute('role', 'combobox');
  const latest = new LatestRequest();
  let items: string[] = [];
  let active = -1;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const close = (): void => {
    list.hidden = true;
    list.replaceChildren();
    items = [];
    active = -1;
    latest.cancel();
  };
  const render = (): void => {
    list.replaceChildren(
      ...items.map((it, i) => {
        const li = h('li', { role: 'option', class: i === active ? 'active' : undefined, 'aria-selected': i === active ? 'true' : 'false' }, it);
        li.addEventListener('mousedown', (e) => {
          e.preventDefault();
          pick(it);
        });
        return li;
      }),
    );
    list.hidden = items.length === 0;
  };
  const pick = (v: string): void => {
    input.value = v;
    close();
    opts.onPick(v);
  };
  const lookup = (): void => {
    const prefix = input.value;
    latest.run((signal) => opts.source(prefix, signal)).then(
      (found) => {
        if (document.activeElement !== input) return;
        items = found;
        active = -1;
        render();
      },
      (err: unknown) => {
        if (!isAbort(err)) close();
      },
    );
  };
  const schedule = (): void => {
    clearTimeout(timer);
    timer = setTimeout(lookup, opts.debounceMs ?? 120);
  };

  input.addEventListener('input', schedule);
  input.addEventListener('focus', schedule);
  input.addEventListener('blur', () => {
    clearTimeout(timer);
    close();
  });
  input.addEventListener('keydown', (e) => {
    if (list.hidden || items.length === 0) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const n = items.length;
      active = e.key === 'ArrowDown' ? (active + 1) % n : (active - 1 + n) % n;
      render();
    } else if (e.key === 'Enter' && active >= 0) {
      e.preventDefault();
      pick(items[active]!);
    } else if (e.key === 'Escape') {
      close();
    }
  });
  return wrap;
}
