/**
 * The editor of one sub-query: metric (autocomplete), aggregator, tag filters (tag key and
 * value autocomplete scoped to the metric, group-by per row), downsample (interval,
 * function, fill), rate (counter, counter max, reset value, drop resets) and the right-axis
 * switch. Every committed edit calls onChange with the whole new SubQuery; typing alone
 * does not (a query runs on change/Enter/pick, not per keystroke).
 */
import { suggest, tagValues } from './api-client.js';
import { attachAutocomplete } from './autocomplete.js';
import type { Downsample, RateOptions, SubQuery, TagFilter } from './dashboard-state.js';
import { h, select } from './dom.js';

export const FILL_POLICIES = ['none', 'nan', 'null', 'zero'] as const;

export interface QueryEditorOptions {
  readonly aggregators: readonly string[];
  readonly onChange: (q: SubQuery) => void;
  readonly onRemove?: () => void;
}

export function queryEditor(initial: SubQuery, opts: QueryEditorOptions): HTMLElement {
  let q = initial;
  const commit = (next: SubQuery): void => {
    q = next;
    opts.onChange(q);
  };
  const aggs = opts.aggregators.includes(q.aggregator) ? opts.aggregators : [q.aggregator, ...opts.aggregators];

  const metric = h('input', { class: 'metric', type: 'text', placeholder: 'metric', spellcheck: 'false', 'aria-label': 'metric' });
  metric.value = q.metric;
  metric.addEventListener('change', () => {
    if (metric.value.trim() !== q.metric) commit({ ...q, metric: metric.value.trim() });
  });
  const metricBox = attachAutocomplete(metric, {
    source: (prefix, signal) => suggest('metrics', prefix, signal),
    onPick: (v) => commit({ ...q, metric: v }),
  });

  const agg = select(aggs, q.aggregator, { class: 'aggregator', 'aria-label': 'aggregator' });
  agg.addEventListener('change', () => commit({ ...q, aggregator: agg.value }));

  const tagRows = h('div', { class: 'tags' });
  const renderTags = (): void => {
    tagRows.replaceChildren(...q.tags.map((t, i) => tagRow(t, i)));
  };
  const setTag = (i: number, t: TagFilter | undefined): void => {
    const tags = [...q.tags];
    if (t === undefined) tags.splice(i, 1);
    else tags[i] = t;
    commit({ ...q, tags });
  };
  const tagRow = (t: TagFilter, i: number): HTMLElement => {
    const key = h('input', { class: 'tagk', type: 'text', placeholder: 'tag key', spellcheck: 'false', 'aria-label': 'tag key' });
    key.value = t.key;
    const value = h('input', { class: 'tagv', type: 'text', placeholder: '* or a|b or wildcard(x*)', spellcheck: 'false', 'aria-label': 'tag value' });
    value.value = t.value;
    const gb = h('input', { type: 'checkbox', class: 'groupby', 'aria-label': 'group by' });
    gb.checked = t.groupBy;
    const current = (): TagFilter => ({ key: key.value.trim(), value: value.value.trim() === '' ? '*' : value.value.trim(), groupBy: gb.checked });
    key.addEventListener('change', () => setTag(i, current()));
    value.addEventListener('change', () => setTag(i, current()));
    gb.addEventListener('change', () => setTag(i, current()));
    const remove = h('button', { type: 'button', class: 'icon', title: 'Remove this filter' }, '×');
    remove.addEventListener('click', () => {
      setTag(i, undefined);
      renderTags();
    });
    return h(
      'div',
      { class: 'tag-row' },
      attachAutocomplete(key, { source: (p, s) => suggest('tagk', p, s, q.metric), onPick: () => setTag(i, current()) }),
      h('span', { class: 'eq' }, '='),
      attachAutocomplete(value, {
        source: (p, s) => (q.metric === '' || key.value.trim() === '' ? suggest('tagv', p, s) : tagValues(q.metric, key.value.trim(), p, s)),
        onPick: () => setTag(i, current()),
      }),
      h('label', { class: 'check', title: 'One series per value of this key' }, gb, 'group by'),
      remove,
    );
  };
  const addTag = h('button', { type: 'button', class: 'link' }, '+ tag');
  addTag.addEventListener('click', () => {
    q = { ...q, tags: [...q.tags, { key: '', value: '*', groupBy: true }] };
    renderTags();
    tagRows.querySelector<HTMLInputElement>('.tag-row:last-child .tagk')?.focus();
  });
  renderTags();

  const ds = downsampleControls(q.downsample, aggs, (d) => commit(withOptional(q, 'downsample', d)));
  const rate = rateControls(q.rate, (r) => commit(withOptional(q, 'rate', r)));
  const right = h('input', { type: 'checkbox', class: 'y2' });
  right.checked = q.axis === 'y2';
  right.addEventListener('change', () => commit({ ...q, axis: right.checked ? 'y2' : 'y' }));

  const remove = opts.onRemove === undefined ? null : h('button', { type: 'button', class: 'icon remove-query', title: 'Remove this query' }, '×');
  remove?.addEventListener('click', () => opts.onRemove?.());
  return h(
    'div',
    { class: 'query' },
    h('div', { class: 'query-main' }, agg, metricBox, h('label', { class: 'check', title: 'Draw against the right y axis' }, right, 'right axis'), remove),
    h('div', { class: 'query-tags' }, tagRows, addTag),
    h('div', { class: 'query-opts' }, ds, rate),
  );
}

function withOptional<K extends 'downsample' | 'rate'>(q: SubQuery, k: K, v: SubQuery[K]): SubQuery {
  const { [k]: _drop, ...rest } = q;
  return (v === undefined ? rest : { ...rest, [k]: v }) as SubQuery;
}

function downsampleControls(d: Downsample | undefined, aggs: readonly string[], onChange: (d: Downsample | undefined) => void): HTMLElement {
  const on = h('input', { type: 'checkbox', class: 'ds-on' });
  on.checked = d !== undefined;
  const interval = h('input', { type: 'text', class: 'ds-interval', size: '5', placeholder: '1m', 'aria-label': 'downsample interval' });
  interval.value = d?.interval ?? '1m';
  const fn = select(aggs, d?.fn ?? 'avg', { class: 'ds-fn', 'aria-label': 'downsample function' });
  const fill = select(FILL_POLICIES, d?.fill ?? 'none', { class: 'ds-fill', 'aria-label': 'fill policy' });
  const emit = (): void => {
    const iv = interval.value.trim();
    interval.classList.toggle('invalid', !/^([0-9]+(ms|s|m|h|d|w|n|y)c?|0?all)$/.test(iv));
    if (interval.classList.contains('invalid') && on.checked) return;
    onChange(on.checked ? { interval: iv, fn: fn.value, fill: fill.value } : undefined);
  };
  for (const el of [on, interval, fn, fill]) el.addEventListener('change', emit);
  return h('span', { class: 'ds' }, h('label', { class: 'check' }, on, 'downsample'), interval, fn, fill);
}

function rateControls(r: RateOptions | undefined, onChange: (r: RateOptions | undefined) => void): HTMLElement {
  const on = h('input', { type: 'checkbox', class: 'rate-on' });
  on.checked = r !== undefined;
  const counter = h('input', { type: 'checkbox', class: 'rate-counter' });
  counter.checked = r?.counter ?? false;
  const max = h('input', { type: 'text', class: 'rate-max', size: '8', placeholder: 'counter max', 'aria-label': 'counter max' });
  max.value = r?.counterMax === undefined ? '' : String(r.counterMax);
  const reset = h('input', { type: 'text', class: 'rate-reset', size: '8', placeholder: 'reset value', 'aria-label': 'reset value' });
  reset.value = r?.resetValue === undefined ? '' : String(r.resetValue);
  const drop = h('input', { type: 'checkbox', class: 'rate-drop' });
  drop.checked = r?.dropResets ?? false;
  const num = (el: HTMLInputElement): number | undefined | null => {
    const t = el.value.trim();
    const n = Number(t);
    el.classList.toggle('invalid', t !== '' && !Number.isFinite(n));
    return t === '' ? undefined : Number.isFinite(n) ? n : null;
  };
  const emit = (): void => {
    const m = num(max);
    const rv = num(reset);
    if (m === null || rv === null) return;
    if (!on.checked) return onChange(undefined);
    onChange({
      counter: counter.checked || drop.checked,
      dropResets: drop.checked,
      ...(m === undefined ? {} : { counterMax: m }),
      ...(rv === undefined ? {} : { resetValue: rv }),
    });
  };
  for (const el of [on, counter, max, reset, drop]) el.addEventListener('change', emit);
  return h(
    'span',
    { class: 'rate' },
    h('label', { class: 'check' }, on, 'rate'),
    h('label', { class: 'check' }, counter, 'counter'),
    max,
    reset,
    h('label', { class: 'check' }, drop, 'drop resets'),
  );
}
