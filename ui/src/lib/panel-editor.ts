/**
 * The query builder of a panel: its sub-queries (query-editor.ts), "+ query", and the
 * panel's axis and legend options (log scale per axis, [min:max] ranges, labels, legend
 * on/off). Each committed edit calls onChange with the whole new Panel.
 */
import type { Panel, SubQuery } from './dashboard-state.js';
import { emptyQuery } from './dashboard-state.js';
import { h } from './dom.js';
import { queryEditor } from './query-editor.js';
import { formatAxisRange, parseAxisRange } from './url-state.js';

export interface PanelEditorOptions {
  readonly aggregators: readonly string[];
  readonly onChange: (p: Panel) => void;
}

export function panelEditor(initial: Panel, opts: PanelEditorOptions): HTMLElement {
  let p = initial;
  const commit = (next: Panel): void => {
    p = next;
    opts.onChange(p);
  };
  const list = h('div', { class: 'queries' });
  const renderQueries = (): void => {
    list.replaceChildren(
      ...p.queries.map((q, i) =>
        queryEditor(q, {
          aggregators: opts.aggregators,
          onChange: (nq) => commit({ ...p, queries: p.queries.map((o, j) => (j === i ? nq : o)) }),
          ...(p.queries.length > 1
            ? {
                onRemove: () => {
                  commit({ ...p, queries: p.queries.filter((_, j) => j !== i) });
                  renderQueries();
                },
              }
            : {}),
        }),
      ),
    );
  };
  renderQueries();
  const add = h('button', { type: 'button', class: 'link add-query' }, '+ query');
  add.addEventListener('click', () => {
    const last: SubQuery | undefined = p.queries[p.queries.length - 1];
    p = { ...p, queries: [...p.queries, { ...emptyQuery(), aggregator: last?.aggregator ?? 'sum' }] };
    renderQueries();
    list.querySelector<HTMLInputElement>('.query:last-child input.metric')?.focus();
  });

  const check = (label: string, value: boolean, set: (v: boolean) => Panel, cls: string): HTMLElement => {
    const c = h('input', { type: 'checkbox', class: cls });
    c.checked = value;
    c.addEventListener('change', () => commit(set(c.checked)));
    return h('label', { class: 'check' }, c, label);
  };
  const rangeInput = (which: 'yrange' | 'y2range'): HTMLElement => {
    const r = p[which];
    const inp = h('input', { type: 'text', class: which, size: '9', placeholder: '[min:max]', 'aria-label': which });
    inp.value = r === undefined ? '' : formatAxisRange(r);
    inp.addEventListener('change', () => {
      const t = inp.value.trim();
      const parsed = t === '' ? undefined : parseAxisRange(t);
      const bad = t !== '' && parsed === undefined;
      inp.classList.toggle('invalid', bad);
      inp.title = bad ? 'Use [min:max]; either end may be empty, min below max' : '';
      if (bad) return;
      const { [which]: _drop, ...rest } = p;
      commit(parsed === undefined ? rest : { ...rest, [which]: parsed });
    });
    return inp;
  };
  const labelInput = (which: 'ylabel' | 'y2label'): HTMLElement => {
    const inp = h('input', { type: 'text', class: which, size: '10', placeholder: which === 'ylabel' ? 'left label' : 'right label' });
    inp.value = p[which] ?? '';
    inp.addEventListener('change', () => {
      const { [which]: _drop, ...rest } = p;
      commit(inp.value.trim() === '' ? rest : { ...rest, [which]: inp.value.trim() });
    });
    return inp;
  };
  const options = h(
    'div',
    { class: 'panel-opts' },
    h('span', { class: 'opt-group' }, 'Left axis', rangeInput('yrange'), labelInput('ylabel'), check('log', p.ylog, (v) => ({ ...p, ylog: v }), 'ylog')),
    h('span', { class: 'opt-group' }, 'Right axis', rangeInput('y2range'), labelInput('y2label'), check('log', p.y2log, (v) => ({ ...p, y2log: v }), 'y2log')),
    check('legend', !p.nokey, (v) => ({ ...p, nokey: !v }), 'legend'),
  );
  return h('div', { class: 'panel-editor' }, list, add, options);
}
